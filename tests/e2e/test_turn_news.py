"""News within the turn with the real Claude Code CLI (docs/digest.md, "News within the turn").

Session A reads `app.py`, then runs a long command; meanwhile session B edits `app.py`; when A's command
is done, its `PostToolUse` hook tells the model, in the request after the command's result, that B
edited the file A read: the turn hears it without waiting for the next prompt.
"""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from sidelight.features.news import NEWS_HEADER
from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, edit, read, say
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b

pytestmark = pytest.mark.e2e


def test_claude_code_hears_a_siblings_edit_within_the_turn(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.claude("a: check the app"),
        lambda: agents.claude("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )

    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    start = text.index(NEWS_HEADER)
    note = text[start : text.index("after you read or wrote it", start) + len("after you read or wrote it")]
    print(note)  # the report quotes it
    assert f"- app.py was edited by claude session {short_id(b.stem)}" in note, note
    # Told once: A's last request (the whole conversation) holds the note once.
    last = [r for r in agents.mock.requests if r.turn == 0][-1].text()
    assert last.count(NEWS_HEADER) == 1, last
    assert "ERROR" not in agents.sidelight_log


def test_codex_hears_a_siblings_patch_within_the_turn(agents: AgentEnv) -> None:
    """The same with Codex: A reads `app.py` with a shell command; B's `apply_patch` changes it; the
    note is a developer message between A's next call and its output."""
    import re

    agents.install_sidelight("codex")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read("app.py"), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [edit("app.py", "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.codex("a: check the app"),
        lambda: agents.codex("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )
    b_id = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", b.name)
    assert b_id is not None, b

    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    assert f"- app.py was edited by codex session {short_id(b_id.group(0))}" in text
    last = [r for r in agents.mock.requests if r.turn == 0][-1].text()
    assert last.count(NEWS_HEADER) == 1, last
    assert "ERROR" not in agents.sidelight_log


def test_qwen_hears_a_siblings_edit_within_the_turn(agents: AgentEnv) -> None:
    """The same with Qwen Code: the note is appended to the tool's result."""
    agents.install_sidelight("qwen")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.qwen("a: check the app"),
        lambda: agents.qwen("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )

    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    assert f"- app.py was edited by qwen session {short_id(b.stem)}" in text
    last = [r for r in agents.mock.requests if r.turn == 0][-1].text()
    assert last.count(NEWS_HEADER) == 1, last
    assert "ERROR" not in agents.sidelight_log


def test_gemini_hears_a_siblings_edit_within_the_turn(agents: AgentEnv) -> None:
    """The same with the Gemini CLI (`AfterTool`): the note is appended to the tool's output."""
    agents.install_sidelight("gemini")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.gemini("a: check the app"),
        lambda: agents.gemini("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )

    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    assert f"- app.py was edited by gemini session {b.stem.rsplit('-', 1)[-1]}" in text
    last = [r for r in agents.mock.requests if r.turn == 0][-1].text()
    assert last.count(NEWS_HEADER) == 1, last
    assert "ERROR" not in agents.sidelight_log
