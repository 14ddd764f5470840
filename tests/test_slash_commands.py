"""A person's Claude Code slash command is their prompt, `/name args`, in every command that reads one.

`tests/data/claude-code/slash-commands.jsonl` is what the real Claude Code 2.1.330 wrote for
`/orchestrator create TODO app by Next.js` (a custom command with arguments), then `/hello` (one
without) and `/model` (a built-in local command: no model request), see tests/data/README.md. The
claude-code-viewer session (Claude Code 1.0.98, tests/fixtures/third-party) starts with the same custom
command, written the older way (`orchestrator is running…`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import sidelight
from sidelight.cli import main
from tests.conftest import claude_prompt_context
from tests.support.reference import reference_scan
from tests.test_reference import assert_same, core_scan

DATA = Path(__file__).parent / "data" / "claude-code"
SAMPLE = DATA / "slash-commands.jsonl"
SAMPLE_ID = "9ce2112d-a422-4557-8425-0c7e14918b96"
SAMPLE_CWD = "/tmp/sidelight-samples/claude-code-slash/project"
VIEWER = (
    Path(__file__).parent
    / "fixtures"
    / "third-party"
    / "claude-code"
    / "d-kimuson-claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
ORCHESTRATOR = "/orchestrator create TODO app by Next.js"


@pytest.fixture
def quiet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME and a state directory of their own, so no command reads or writes the real ones."""
    for name in list(os.environ):
        if name.startswith(("SIDELIGHT_", "XDG_")) or name == "CLAUDE_CONFIG_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path / "home"


def json_lines(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    assert main(list(args)) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return [json.loads(line) for line in out.splitlines()]


def test_the_sample_holds_the_three_commands_as_claude_code_wrote_them() -> None:
    # The shapes the rule tells apart (docs/activity.md): a command for the model starts with
    # <command-message>, its expansion is an isMeta line; a local command starts with <command-name>.
    users = [line for line in map(json.loads, SAMPLE.read_text().splitlines()) if line.get("type") == "user"]
    texts = [(u["message"]["content"], u.get("isMeta", False)) for u in users]
    commands = [t for t, meta in texts if isinstance(t, str) and not meta]
    assert commands == [
        "<command-message>orchestrator</command-message>\n<command-name>/orchestrator</command-name>\n"
        "<command-args>create TODO app by Next.js</command-args>",
        "<command-message>hello</command-message>\n<command-name>/hello</command-name>",
        "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
        "            <command-args></command-args>",
    ]
    assert sum(meta for _, meta in texts) == 3  # two expansions and the local command's caveat


def test_scan_counts_each_command_sent_to_the_model_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert_same(core_scan(SAMPLE, "claude-code"), reference_scan(SAMPLE, "claude-code"))
    activity = sidelight.scan(SAMPLE)
    assert activity.messages == {"user": 2, "assistant": 3}
    assert (activity.first_user_text, activity.last_user_text) == (ORCHESTRATOR, "/hello")
    [scanned] = json_lines(capsys, "scan", "--json", str(SAMPLE))
    assert (scanned["messages"]["user"], scanned["first_user_text"]) == (2, ORCHESTRATOR)
    assert main(["scan", str(SAMPLE)]) == 0
    assert f'first user  "{ORCHESTRATOR}"' in capsys.readouterr().out


def test_read_and_history_show_the_commands_not_their_expansions(
    quiet_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = json_lines(capsys, "read", "--json", str(SAMPLE))
    assert [e["text"] for e in entries if e["role"] == "user"] == [ORCHESTRATOR, "/hello"]
    assert main(["read", "--lines", "20", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert f"User: {ORCHESTRATOR}\n" in out
    assert "Split the task" not in out and "/model" not in out and "local-command" not in out
    history = json_lines(capsys, "history", "--json", str(SAMPLE))
    assert [m["content"] for m in history if m["role"] == "user"] == [ORCHESTRATOR, "/hello"]


def test_recap_starts_the_turns_at_the_commands(quiet_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [recap] = json_lines(capsys, "recap", "--json", str(SAMPLE))
    assert (recap["turns"], recap["interrupted"], recap["last_request"]) == (2, False, "/hello")
    assert f'User asked: "{ORCHESTRATOR}"' in recap["text"]
    # The 1.0.98 session: one turn (it was "0 turns"), cut before its final answer.
    [viewer] = json_lines(capsys, "recap", "--json", str(VIEWER))
    assert (viewer["turns"], viewer["last_request"]) == (1, ORCHESTRATOR)
    assert f'Turn 1 (2025-09-03 00:52 UTC): User asked: "{ORCHESTRATOR}".' in viewer["text"]


def sibling_home(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A HOME whose Claude Code project holds the sample and a new session of this test's."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-tmp-sidelight-samples-claude-code-slash-project"
    project.mkdir(parents=True)
    shutil.copy(SAMPLE, project / f"{SAMPLE_ID}.jsonl")
    me = "11111111-2222-4333-8444-555555555555"
    transcript = project / f"{me}.jsonl"
    first = {"type": "user", "sessionId": me, "cwd": SAMPLE_CWD, "uuid": "u", "message": {"content": "hi"}}
    transcript.write_text(json.dumps(first) + "\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SIDELIGHT_", "XDG_"))}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(tmp_path / "state"), NO_COLOR="1")
    return env, transcript


def test_a_siblings_digest_line_names_the_command(tmp_path: Path) -> None:
    env, transcript = sibling_home(tmp_path)
    context = claude_prompt_context(transcript, SAMPLE_CWD, env)
    line = next(line for line in context.splitlines() if SAMPLE_ID[:8] in line)
    assert f'5 messages): "{ORCHESTRATOR}" -> wrote todo.md' in line


def test_status_and_dashboard_rows_count_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env, _ = sibling_home(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SIDELIGHT_", "XDG_")) or name == "CLAUDE_CONFIG_DIR":
            monkeypatch.delenv(name)
    for name in ("HOME", "SIDELIGHT_STATE_DIR", "NO_COLOR"):
        monkeypatch.setenv(name, env[name])
    rows = {row["key"]: row for row in json_lines(capsys, "status", "--json")}
    row = rows[f"claude-code:{SAMPLE_ID}"]
    assert (row["messages"], row["current_task"]) == (5, "/hello")
    from sidelight.config import Settings
    from sidelight.dashboard.data import row_record
    from sidelight.plugins import get_plugins
    from sidelight.watch.status import collect_status

    report = collect_status(Settings.load(), get_plugins())
    [record] = [row_record(r) for r in report.rows if r.key == f"claude-code:{SAMPLE_ID}"]
    assert (record["messages"], record["current_task"]) == (5, "/hello")
