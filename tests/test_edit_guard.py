"""The stale-write guard (docs/guard.md): a write to a file another session changed since this session last
read or wrote it is refused once, with one line naming that session; the retry goes through."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents.claude_code import claude_project_dir
from sidelight.config import ConfigError, Settings
from sidelight.features import guard
from sidelight.features.guard import patch_paths, tool_paths
from sidelight.features.hook import handle_hook

A = "aaaaaaaa-0000-4000-8000-000000000000"
B = "bbbbbbbb-0000-4000-8000-000000000000"


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class World:
    """Claude Code sessions of one project (and Codex ones) in a throwaway HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.project = home / "proj"
        self.project.mkdir()
        self.app = self.project / "app.py"
        self.app.write_text("a = 1\n")
        self.folder = claude_project_dir(home / ".claude" / "projects", self.project)
        self.folder.mkdir(parents=True)
        self.now = time.time()
        self.calls = 0

    def transcript(self, session: str) -> Path:
        return self.folder / f"{session}.jsonl"

    def _append(self, session: str, *lines: dict[str, Any]) -> None:
        with self.transcript(session).open("a") as f:
            for line in lines:
                f.write(json.dumps({"sessionId": session, "cwd": str(self.project), **line}) + "\n")

    def prompt(self, session: str, ago: float, text: str = "go") -> None:
        self._append(
            session,
            {"type": "user", "message": {"role": "user", "content": text}, "timestamp": iso(self.now - ago)},
        )

    def tool(
        self,
        session: str,
        ago: float,
        name: str,
        args: dict[str, Any],
        *,
        error: bool = False,
        result: bool = True,
    ) -> None:
        """A tool call ``ago`` seconds before now, and its result a moment later (``result=False``:
        none yet)."""
        self.calls += 1
        ident = f"toolu_{self.calls}"
        block = {"type": "tool_use", "id": ident, "name": name, "input": args}
        self._append(
            session,
            {
                "type": "assistant",
                "message": {"id": f"m{self.calls}", "role": "assistant", "content": [block]},
                "timestamp": iso(self.now - ago),
            },
        )
        if result:
            out = {"type": "tool_result", "tool_use_id": ident, "content": "ok", "is_error": error}
            self._append(
                session,
                {
                    "type": "user",
                    "message": {"role": "user", "content": [out]},
                    "timestamp": iso(self.now - ago + 0.5),
                },
            )

    def before_write(
        self, session: str, name: str = "Write", args: dict[str, Any] | None = None, **env: str
    ) -> dict[str, Any] | None:
        """What ``sidelight hook claude-code`` prints for a PreToolUse of ``name`` in ``session``."""
        payload = {
            "session_id": session,
            "transcript_path": str(self.transcript(session)),
            "cwd": str(self.project),
            "hook_event_name": "PreToolUse",
            "tool_name": name,
            "tool_input": args if args is not None else {"file_path": str(self.app), "content": "a = 3\n"},
            "tool_use_id": "toolu_now",
        }
        settings = Settings.load(env={**os.environ, **env})
        printed: list[str | None] = []
        handle_hook("claude-code", json.dumps(payload), settings=settings, deliver=collect(printed))
        out = printed[0] if printed else None
        return None if out is None else json.loads(out)


def collect(printed: list[str | None]) -> Any:
    """A hook's ``deliver`` that keeps what it was given."""

    def deliver(output: str | None) -> bool:
        printed.append(output)
        return True

    return deliver


def reason(answer: dict[str, Any] | None) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    return str(out["permissionDecisionReason"])


@pytest.fixture
def world(home: Path) -> World:
    w = World(home)
    w.prompt(A, 600)
    w.tool(A, 590, "Read", {"file_path": str(w.app)})  # A read app.py ten minutes ago
    w.prompt(B, 300)
    return w


def test_refused_once_then_the_retry_goes_through(world: World) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    world.tool(
        A, 1, "Write", {"file_path": str(world.app), "content": "a = 3\n"}, result=False
    )  # the call itself
    line = reason(world.before_write(A))
    assert "claude session" in line and B[:8] in line
    assert "app.py was edited by claude session" in line and "2m ago" in line
    assert "after this session last read or wrote it" in line
    assert "Re-read" in line and "retrying this write as is will go through" in line
    assert "\n" not in line
    assert world.before_write(A) is None  # the retry
    assert (world.home / "state" / "guard").is_dir()


def test_a_change_further_back_than_the_first_window_is_found(world: World) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    for n in range(300):  # some 200 KB after it, later than A's read: the window grows to reach it
        world.prompt(B, 100 - n / 10, "x" * 600)
    assert world.transcript(B).stat().st_size > 4 * guard.FIRST_WINDOW // 2
    assert "app.py was edited by claude session" in reason(world.before_write(A))


def test_a_read_before_the_tail_is_not_held_against_this_session(world: World) -> None:
    world.tool(B, 595, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    # A read app.py at -590 (the fixture), after B's change; then 100 KB of prompts, then a command.
    for n in range(150):
        world.prompt(A, 500 - n, "y" * 600)
    world.tool(A, 300, "Bash", {"command": "ls"})
    # Its tail (64 KiB) no longer holds the read, nor the start: it counts from its first call.
    assert world.before_write(A, SIDELIGHT_FIRST_LOOK_BYTES="65536") is None
    assert world.before_write(A) is None  # read whole: the read is there


def test_no_refusal_when_this_session_read_it_again(world: World) -> None:
    world.tool(B, 120, "Write", {"file_path": str(world.app), "content": "a = 2\n"})
    world.tool(A, 60, "Read", {"file_path": str(world.app)})
    assert world.before_write(A) is None


def test_no_refusal_when_nobody_else_touched_it(world: World) -> None:
    world.tool(B, 120, "Write", {"file_path": str(world.project / "other.py"), "content": "x"})
    assert world.before_write(A) is None


def test_no_refusal_for_a_change_before_this_session_last_read_it(world: World) -> None:
    world.tool(B, 900, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    assert world.before_write(A) is None


def test_a_sibling_change_that_failed_is_no_change(world: World) -> None:
    world.tool(B, 120, "Write", {"file_path": str(world.app), "content": "a = 2\n"}, error=True)
    assert world.before_write(A) is None


def test_a_file_never_read_counts_from_the_session_start(world: World) -> None:
    new = world.project / "new.py"
    world.tool(B, 120, "Write", {"file_path": str(new), "content": "x"})
    line = reason(world.before_write(A, args={"file_path": str(new), "content": "y"}))
    assert "new.py was written by claude session" in line
    assert "after this session started (it has not read it)" in line


def test_a_shell_write_is_attributed_with_its_command(world: World) -> None:
    world.tool(B, 120, "Bash", {"command": "sed -i s/1/2/ app.py"})
    line = reason(world.before_write(A))
    assert f"app.py was changed by claude session {B[:8]} with `sed -i s/1/2/ app.py`" in line


def test_a_shell_command_that_only_reads_the_file_is_no_change(world: World) -> None:
    world.tool(B, 120, "Bash", {"command": "cp app.py /tmp/backup.py && cat app.py > copy.txt"})
    assert world.before_write(A) is None


def test_written_files() -> None:
    from sidelight.commands import written_files

    assert written_files("echo x >> app.py; git checkout -- a.py") == ["app.py", "a.py"]
    assert written_files("cat app.py | grep x > /dev/null") == []
    assert written_files("perl -pi -e 's/a/b/' app.py") == ["s/a/b/", "app.py"]
    assert written_files("mv 'a b.py' \"c d.py\"") == ["c d.py"]
    assert written_files("echo 'unclosed") == []


def test_inform_lets_it_through_with_a_note(world: World) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    answer = world.before_write(A, SIDELIGHT_EDIT_GUARD="inform")
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert "permissionDecision" not in out
    assert "this write went through" in out["additionalContext"]
    assert world.before_write(A, SIDELIGHT_EDIT_GUARD="inform") is None  # said once


def test_off_does_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the guard ran")

    monkeypatch.setattr(guard, "check_write", boom)
    assert world.before_write(A, SIDELIGHT_EDIT_GUARD="off") is None


def test_a_non_write_tool_returns_at_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the guard ran")

    monkeypatch.setattr(guard, "check_write", boom)
    assert world.before_write(A, name="Read", args={"file_path": str(world.app)}) is None
    assert world.before_write(A, name="Bash", args={"command": "ls"}) is None
    assert "hook input not understood" not in (world.home / "state" / "sidelight.log").read_text()


def test_an_internal_error_lets_the_write_through(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(guard, "sibling_changes", boom)
    assert world.before_write(A) is None
    assert "hook failed" in (world.home / "state" / "sidelight.log").read_text()


def test_bad_transcripts_refuse_nothing(world: World) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    with world.transcript(B).open("a") as f:
        f.write('{"broken json\n\x00\x01 not a line\n')
    with world.transcript(A).open("a") as f:
        f.write("{}\n[1,2]\n")
    assert reason(world.before_write(A))  # the sibling's good lines still count
    world.transcript(B).unlink()
    assert world.before_write(A) is None


def test_edit_guard_setting(home: Path) -> None:
    assert Settings.load().edit_guard == "refuse-once"
    assert Settings.load(env={**os.environ, "SIDELIGHT_EDIT_GUARD": "Inform"}).edit_guard == "inform"
    with pytest.raises(ConfigError, match="edit_guard"):
        Settings.load(env={**os.environ, "SIDELIGHT_EDIT_GUARD": "maybe"})


# --- Codex: apply_patch --------------------------------------------------------------------------------


def test_patch_paths_incl_moves() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** Update File: src/app.py\n"
        "*** Move to: src/main.py\n"
        "@@\n-a\n+b\n*** Delete File: old.py\n*** End Patch\n"
    )
    assert patch_paths(patch) == ["notes.txt", "src/app.py", "src/main.py", "old.py"]
    assert tool_paths({"command": patch}) == ["notes.txt", "src/app.py", "src/main.py", "old.py"]
    assert tool_paths({"file_path": "/x/y.py", "content": ""}) == ["/x/y.py"]


@pytest.mark.parametrize(
    "text", ["", "not a patch", "*** Update File: app.py\n", "*** Begin Patch\n*** Update File: \n", None, 3]
)
def test_a_patch_that_does_not_parse_names_nothing(text: Any) -> None:
    assert patch_paths(text) == []
    assert tool_paths({"command": text}) == []


def _codex_line(moment: float, kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": iso(moment), "type": kind, "payload": payload}) + "\n"


def test_codex_apply_patch_refused_once(home: Path) -> None:
    project = home / "proj"
    project.mkdir()
    (project / "app.py").write_text("a = 1\n")
    now = time.time()
    folder = home / ".codex" / "sessions" / "2026" / "01" / "01"
    folder.mkdir(parents=True)
    a = folder / "rollout-2026-01-01T00-00-00-0000000a-0000-4000-8000-000000000000.jsonl"
    b = folder / "rollout-2026-01-01T00-00-00-0000000b-0000-4000-8000-000000000000.jsonl"
    for path, ident, start in (
        (a, "0000000a-0000-4000-8000-000000000000", 600),
        (b, "0000000b-0000-4000-8000-000000000000", 300),
    ):
        meta = {"id": ident, "timestamp": iso(now - start), "cwd": str(project), "originator": "codex_exec"}
        path.write_text(_codex_line(now - start, "session_meta", meta))
    read = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "cat app.py"}),
        "call_id": "c1",
    }
    with a.open("a") as f:
        f.write(_codex_line(now - 590, "response_item", read))
        f.write(
            _codex_line(
                now - 589,
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": "a = 1"},
            )
        )
    patch = (
        "*** Begin Patch\n*** Add File: notes.txt\n+x\n*** Update File: app.py\n@@\n-a = 1\n+a = 2\n"
        "*** End Patch\n"
    )
    with b.open("a") as f:
        f.write(
            _codex_line(
                now - 120,
                "response_item",
                {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "p1"},
            )
        )
        f.write(
            _codex_line(
                now - 119,
                "response_item",
                {"type": "custom_tool_call_output", "call_id": "p1", "output": "Success"},
            )
        )
    mine = "*** Begin Patch\n*** Update File: app.py\n@@\n-a = 1\n+a = 3\n*** End Patch\n"
    payload = {
        "session_id": "0000000a-0000-4000-8000-000000000000",
        "transcript_path": str(a),
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": mine},
        "tool_use_id": "call_x",
    }
    printed: list[str | None] = []
    handle_hook("codex", json.dumps(payload), deliver=collect(printed))
    assert printed[0] is not None
    line = reason(json.loads(printed[0]))
    assert "app.py was edited by codex session 0000000b" in line
    printed.clear()
    handle_hook("codex", json.dumps(payload), deliver=collect(printed))
    assert printed == [None]  # the retry goes through
    # A patch that does not parse: no refusal, no error.
    printed.clear()
    broken = {**payload, "tool_input": {"command": "*** Update File: app.py"}}
    handle_hook("codex", json.dumps(broken), deliver=collect(printed))
    assert printed == [None]


def test_the_installers_match_the_write_tools_the_injectors_read() -> None:
    from sidelight.agents import claude_code, codex, gemini, qwen
    from sidelight.agents.claude_code import install as claude_install
    from sidelight.agents.codex import install as codex_install
    from sidelight.agents.gemini import install as gemini_install
    from sidelight.agents.qwen import install as qwen_install

    assert "|".join(claude_code.WRITE_TOOLS) == claude_install.CLAUDE_MATCHERS["PreToolUse"]
    assert {"PreToolUse": "|".join(codex.WRITE_TOOLS)} == codex_install.CODEX_MATCHERS
    assert {"PreToolUse": "|".join(qwen.WRITE_TOOLS)} == qwen_install.QWEN_MATCHERS
    assert "PreToolUse" in claude_install.CLAUDE_EVENTS and "PreToolUse" in codex_install.CODEX_EVENTS
    assert "PreToolUse" in qwen_install.QWEN_EVENTS
    assert {"BeforeTool": "|".join(gemini.WRITE_TOOLS)} == gemini_install.GEMINI_MATCHERS
    assert "BeforeTool" in gemini_install.GEMINI_EVENTS


def test_uninstall_takes_the_guards_hooks_away(home: Path) -> None:
    from sidelight.agents.claude_code import install as claude_install
    from sidelight.agents.codex import install as codex_install

    claude_install.install_claude_code()
    codex_install.install_codex()
    claude = json.loads((home / ".claude" / "settings.json").read_text())
    codex = json.loads((home / ".codex" / "hooks.json").read_text())
    assert claude["hooks"]["PreToolUse"][0]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    assert codex["hooks"]["PreToolUse"][0]["matcher"] == "apply_patch"
    claude_install.uninstall_claude_code()
    codex_install.uninstall_codex()
    for path in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json"):
        assert "PreToolUse" not in (path.read_text() if path.exists() else "")
