"""A sibling's failed command in the digest: `ran python3 test_app.py (failed, exit 1)`, as its recap says
it, for every agent whose transcript records how a command went; a command run again with success since
is no failure, nor is one that only looks (`grep` finding nothing exits with 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import hypothesis
import pytest

from sidelight.engine.reads import TranscriptRead, scan_reads
from sidelight.formats import Category
from sidelight.plugins import Plugins
from sidelight.records import Session, SessionActivity
from sidelight.templates.default import summarize
from sidelight.types import Activity, ToolUse

DATA = Path(__file__).parent / "data"

#: Each agent's sample (written by the real CLI), and how its `wc -l notes.txt` result reads once the
#: command is `python3 test_app.py` and it failed, as that agent writes a failure.
FAILED = {
    "claude-code": (
        "claude-code/four-tools-resume.jsonl",
        r'"content":"2 /tmp/sidelight-samples/claude-code/project/notes.txt","is_error":false',
        r'"content":"Exit code 1\nAssertionError","is_error":true',
    ),
    "codex": (
        "codex/four-tools-resume.jsonl",
        r"Process exited with code 0\nOriginal token count: 13\nOutput:\n"
        r"2 /tmp/sidelight-samples/codex/project/notes.txt\n",
        r"Process exited with code 1\nOutput:\nAssertionError\n",
    ),
    "pi": (
        "pi/four-tools-continue.jsonl",
        r'"text":"2 /tmp/sidelight-samples/pi/project/notes.txt\n"}],"isError":false',
        r'"text":"AssertionError\n\nCommand exited with code 1"}],"isError":true',
    ),
    "gemini": (
        "gemini/four-tools-resume.jsonl",
        r"Output: 2 /tmp/sidelight-samples/gemini/project/notes.txt\nProcess Group PGID: 16249",
        r"Output: AssertionError\nExit Code: 1",
    ),
    "qwen": (
        "qwen/four-tools-resume.jsonl",
        r"Output: 2 /tmp/sidelight-samples/qwen/project/notes.txt\nError: (none)\nExit Code: 0",
        r"Output: AssertionError\nError: (none)\nExit Code: 1",
    ),
    "copilot": (
        "copilot/four-tools-resume.jsonl",
        r"2 /tmp/sidelight-samples/copilot/project/notes.txt\n<shellId: 0 completed with exit code 0>",
        r"AssertionError\n<shellId: 0 completed with exit code 1>",
    ),
    # opencode's bash part stays "completed" when the command exits 1: the export keeps its exit code.
    "opencode": (
        "opencode/four-tools-continue.jsonl",
        r'"output":"2 /tmp/sidelight-samples/opencode/project/notes.txt\n","error":null,'
        r'"time":{"start":1795585684242},"exit":0',
        r'"output":"AssertionError\n","error":null,"time":{"start":1795585684242},"exit":1',
    ),
}


def sibling_line(tmp_path: Path, fmt: str, *, fail: bool) -> str:
    """The digest line of the agent's sample, its `wc -l` turned into `python3 test_app.py` (failed or
    not), through the digest's own scan."""
    sample, ok, failed = FAILED[fmt]
    agent = fmt.split("-")[0]
    text = (DATA / sample).read_text(encoding="utf-8")
    command = f"wc -l /tmp/sidelight-samples/{fmt}/project/notes.txt"
    assert command in text and ok in text, "the sample changed: update FAILED"
    text = text.replace(command, "python3 test_app.py")
    if fail:
        text = text.replace(ok, failed)
    path = tmp_path / f"{agent}.jsonl"
    path.write_text(text, encoding="utf-8")
    session = Session(key=f"t:{fmt}", name="sib", path=path, format=fmt, group="/w", resolver="t")
    plugins = Plugins(entry_points=False)
    (activity,) = scan_reads([TranscriptRead(session, path, None, False)], plugins)
    assert isinstance(activity, Activity)
    return summarize(SessionActivity.merge(session, [activity])) or ""


@pytest.mark.parametrize("fmt", FAILED)
def test_a_failed_command_is_said_to_have_failed_for_every_agent(tmp_path: Path, fmt: str) -> None:
    line = sibling_line(tmp_path, fmt, fail=True)
    assert "ran python3 test_app.py (failed, exit 1)" in line, line
    assert len(line) <= 300
    # The same command that passed says nothing of the kind.
    assert "failed" not in sibling_line(tmp_path, fmt, fail=False)


def command(arg: str, result: str | None, error: bool = False, stamp: str = "t") -> ToolUse:
    return ToolUse("Bash", Category.COMMAND, arg, stamp, result=result, result_error=error)


def line_of(*uses: ToolUse) -> str:
    session = Session(
        key="t:s", name="sib", path=Path("/w/s.jsonl"), format="claude-code", group="/w", resolver="t"
    )
    counts = {"edit": 0, "read": 0, "command": len(uses), "other": 0}
    return summarize(SessionActivity(session, assistant_messages=1, categories=counts, tool_uses=uses)) or ""


def test_a_failure_fixed_since_is_no_news_and_one_not_fixed_is_shown_before_later_commands() -> None:
    failed = command("cd app && pytest -q | tail -5", "Exit code 1\n=== 2 failed, 3 passed in 0.1s ===", True)
    passed = command("pytest -q", "=== 5 passed in 0.1s ===")
    other = command("git commit -m 'wip'", "[main 1a2b3c] wip")
    assert line_of(failed, passed).endswith("ran pytest -q (+1)")
    assert line_of(failed, other).endswith("ran cd app && pytest… (failed, exit 1) (+1)")
    assert line_of(passed, failed).endswith("(failed, exit 1) (+1)")
    # A run whose output says nothing (still running, cut off) neither fails nor fixes.
    assert "(failed, exit 1)" in line_of(failed, command("pytest -q", None))
    assert "(failed, exit 1)" in line_of(failed, command("pytest -q", "collecting…"))


def test_a_command_that_only_looks_never_failed_and_a_failure_without_a_code_says_so() -> None:
    from sidelight.commands import command_failure, latest_failure

    assert line_of(command("grep -rn TODO src", "Exit code 1", True)).endswith("ran grep -rn TODO src")
    assert command_failure("make deploy", "permission denied", is_error=True) == "failed"
    assert command_failure("make deploy", "done\nexit code: 0", is_error=False) is None
    assert latest_failure([command("make deploy", "Error: boom", True)]) is not None
    # A scan that kept no results (a fleet's remote sibling, an older core) says nothing of failures.
    assert line_of(command("make deploy", None, True)).endswith("ran make deploy")


def test_the_digest_of_a_real_sibling_says_its_command_failed(tmp_path: Path) -> None:
    """The whole prompt path: a Claude Code sibling whose test run failed, from the sample the real CLI
    wrote, through `get_session_updates` with the built-in resolvers."""
    from sidelight.config import Settings
    from sidelight.features.digest import get_session_updates

    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-w-p"
    project.mkdir(parents=True)
    sample, ok, failed = FAILED["claude-code"]
    text = (DATA / sample).read_text(encoding="utf-8")
    text = text.replace("wc -l /tmp/sidelight-samples/claude-code/project/notes.txt", "python3 test_app.py")
    (project / "sibling.jsonl").write_text(text.replace(ok, failed), encoding="utf-8")
    shutil.copy(DATA / sample, project / "reader.jsonl")
    settings = Settings.load(
        env={"SIDELIGHT_SCOPE": "all", "SIDELIGHT_STATE_DIR": str(tmp_path / "state")}, home=home
    )
    digest = get_session_updates("reader", settings=settings, plugins=Plugins(entry_points=False)) or ""
    assert "ran python3 test_app.py (failed, exit 1)" in digest, digest
    assert len(digest) <= 500


_OUTPUT_WORDS = [
    "ok", "exit code 1", "Exit status: 2", "exited with code 0", "Process exited with code 127",
    "==== 2 failed,", "10 passed in 0.31s ====", "test result: FAILED. 3 passed; 1 failed;",
    "Tests:  1 failed, 4 passed, 5 total", "FAIL\tpkg/x\t0.01s", "ok  \tpkg/x\t0.01s", "1 error",
    "Traceback", "\n", " ", "done", "ERROR", "warning",
]  # fmt: skip


@hypothesis.given(
    words=hypothesis.strategies.lists(hypothesis.strategies.sampled_from(_OUTPUT_WORDS), max_size=12),
    padding=hypothesis.strategies.integers(min_value=0, max_value=5000),
    error=hypothesis.strategies.booleans(),
)
@hypothesis.settings(max_examples=300, deadline=None)
def test_the_digest_s_cheap_test_never_misses_a_failure_the_rules_see(words, padding, error):
    # records._may_tell_failure spares the digest the command rules' import when no result could say a
    # command failed: whatever they call a failure, it must let through.
    from sidelight.commands import command_outcome
    from sidelight.records import _may_tell_failure

    text = " ".join(words[: len(words) // 2]) + "x" * padding + " ".join(words[len(words) // 2 :])
    use = ToolUse("Bash", Category.COMMAND, "make test", "t1", result=text, result_error=error)
    failed, _ = command_outcome(text, error)
    if failed:
        assert _may_tell_failure(use), text
