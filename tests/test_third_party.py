"""Transcripts nobody here wrote: other projects' test fixtures (tests/fixtures/third-party, see its README).

Every fixture is detected as its agent's format, scanned equal to the reference counter, and read,
listed and recapped by the commands without an error; the digest a sibling session receives names
what one of them did.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import sidelight
from sidelight.cli import main
from tests.conftest import claude_prompt_context
from tests.support.reference import reference_scan
from tests.test_reference import assert_same, core_scan

THIRD_PARTY = Path(__file__).parent / "fixtures" / "third-party"
#: The fixtures' folders are named after their agent's format.
FORMATS = ("claude-code", "codex", "copilot", "gemini", "pi", "qwen")


def _fixtures() -> list[object]:
    return [
        pytest.param(fmt, path, id=str(path.relative_to(THIRD_PARTY)))
        for fmt in FORMATS
        for path in sorted((THIRD_PARTY / fmt).rglob("*.jsonl"))
    ]


FIXTURES = _fixtures()


def test_every_agent_has_fixtures_and_the_readme_lists_each() -> None:
    readme = (THIRD_PARTY / "README.md").read_text(encoding="utf-8")
    assert {param.values[0] for param in FIXTURES} == set(FORMATS)  # type: ignore[attr-defined]
    for param in FIXTURES:
        path: Path = param.values[1]  # type: ignore[attr-defined]
        assert path.name in readme, f"{path.name} is not in {THIRD_PARTY / 'README.md'}"
        assert path.stat().st_size < 200_000


@pytest.mark.parametrize(("fmt", "path"), FIXTURES)
def test_detected_as_its_agents_format(fmt: str, path: Path) -> None:
    assert sidelight.detect_format(path) == fmt


@pytest.mark.parametrize(("fmt", "path"), FIXTURES)
def test_scan_equals_the_reference_counter(fmt: str, path: Path) -> None:
    assert_same(core_scan(path, fmt), reference_scan(path, fmt))


@pytest.fixture
def quiet_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME and a state directory of their own, so no command reads or writes the real ones."""
    for name in ("HOME", "SIDELIGHT_STATE_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path / "home"


COMMANDS = (
    ("scan",),
    ("scan", "--json"),
    ("read", "--lines", "20"),
    ("read", "--json"),
    ("history",),
    ("recap",),
    ("recap", "--json"),
)


@pytest.mark.parametrize(("fmt", "path"), FIXTURES)
def test_every_reading_command_reads_it(
    fmt: str, path: Path, quiet_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in COMMANDS:
        code = main([command[0], *command[1:], str(path)])
        out, err = capsys.readouterr()
        assert code == 0, f"sidelight {' '.join(command)}: exit {code}: {err}"
        assert "Traceback" not in err
        if "--json" in command:
            for line in out.splitlines():
                json.loads(line)
        elif command[0] == "scan":
            assert f"format      {fmt}" in out or f"format    {fmt}" in out or f"format  {fmt}" in out


def scan_of(name: str) -> sidelight.Activity:
    return sidelight.scan(str(THIRD_PARTY / name))


def test_qwen_0_21_without_provenance_is_qwen_and_its_notification_no_prompt() -> None:
    # Qwen Code 0.21.13 wrote no `provenance`: detected as Claude Code, its Gemini-style parts read as
    # nothing (0 prompts, no tools), and a background task's notice was a prompt.
    activity = scan_of("qwen/jazzyalex-agent-sessions__019f0000-0000-7000-8000-000000000001.jsonl")
    assert activity.format == "qwen"
    assert activity.messages == {"user": 1, "assistant": 2}
    assert activity.first_user_text == "Inspect the synthetic fixture."
    assert activity.last_user_text == "Inspect the synthetic fixture."
    assert activity.tools == {"read_file": 1}
    # A chat whose first line is telemetry (`systemPayload`) is Qwen's too.
    assert scan_of("qwen/jazzyalex-agent-sessions__system_telemetry.jsonl").format == "qwen"


def test_a_real_claude_code_session_with_inline_subagents(quiet_home: Path) -> None:
    # Claude Code 1.0.98, three Task subagents whose turns are written inline (isSidechain): their
    # writes count toward the session, their prompts (written by the parent) are no person's. The
    # person's one prompt is the custom slash command the session starts with, not its expansion.
    activity = scan_of("claude-code/d-kimuson-claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert activity.title == "Empty Repo Setup: CLAUDE.md Foundation Created"
    assert activity.messages["user"] == 1
    assert activity.first_user_text == "/orchestrator create TODO app by Next.js"
    assert activity.last_user_text == "/orchestrator create TODO app by Next.js"
    assert activity.tools["Task"] == 3
    assert activity.categories["edit"] > 10
    assert any(path.endswith("components/TodoItem.tsx") for path in activity.files_touched)


def test_a_sibling_hears_what_a_real_session_did(tmp_path: Path) -> None:
    """The prompt hook of a new Claude Code session in the same project names what the real session
    next to it (claude-code-viewer's sample, Claude Code 1.0.98) did."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    name = "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    shutil.copy(THIRD_PARTY / "claude-code" / f"d-kimuson-claude-code-viewer__{name}", project / name)
    me = "11111111-2222-4333-8444-555555555555"
    transcript = project / f"{me}.jsonl"
    first = {
        "type": "user",
        "sessionId": me,
        "cwd": "/path/to/Demo",
        "uuid": "u",
        "message": {"content": "hi"},
    }
    transcript.write_text(json.dumps(first) + "\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SIDELIGHT_", "XDG_"))}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(tmp_path / "state"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    context = claude_prompt_context(transcript, "/path/to/Demo", env)
    assert "Empty Repo Setup: CLAUDE.md Foundation Created" in context
    # 40 replies and the person's one prompt, the slash command the session started with.
    assert "41 messages" in context
    assert '"/orchestrator create TODO app by Next.js" -> edited ' in context
    assert "edited todo-app/src/" in context
