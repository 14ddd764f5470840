"""News within the turn with the real CLIs (docs/digest.md, "News within the turn").

Session A reads `app.py`, then runs a long command; meanwhile session B edits `app.py`; when A's command
is done, its after-tool hook (`PostToolUse`; the Gemini CLI's `AfterTool`) tells the model, in the
request after the command's result, that B edited the file A read: the turn hears it without waiting for
the next prompt, and once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sidelight.engine.paths import short_id
from sidelight.features.news import NEWS_HEADER
from sidelight.features.reader import NEWS_MARKER, read_session_log
from sidelight.statelayout import export_dir
from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, edit, read, say
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b
from tests.e2e.test_guard_hosts import host_runner

pytestmark = pytest.mark.e2e

#: How each host's session is named in the note, from B's transcript.
NAMES: dict[str, tuple[str, Callable[[Path], str]]] = {
    "claude-code": ("claude", lambda b: short_id(b.stem)),
    "qwen": ("qwen", lambda b: short_id(b.stem)),
    "gemini": ("gemini", lambda b: b.stem.rsplit("-", 1)[-1]),
    "codex": ("codex", lambda b: short_id(_uuid(b.name))),
}


def _uuid(name: str) -> str:
    found = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", name)
    assert found is not None, name
    return found.group(0)


def _run(agents: AgentEnv, host: str) -> Any:
    return {
        "claude-code": agents.claude,
        "qwen": agents.qwen,
        "gemini": agents.gemini,
        "codex": agents.codex,
    }[host]


@pytest.mark.parametrize("host", ["claude-code", "codex", "qwen", "gemini"])
def test_a_siblings_edit_is_heard_within_the_turn(agents: AgentEnv, host: str) -> None:
    """Codex reads with a shell command (`cat app.py`: naming the file counts as reading it) and B
    changes it with `apply_patch`; the note is a developer message between A's next call and its
    output. Qwen Code and the Gemini CLI append it to the tool's result; Claude Code adds it after."""
    agents.install_sidelight(host)
    run = _run(agents, host)
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    name = "app.py" if host == "codex" else str(app)
    bump = edit(name, "VERSION = 0", "VERSION = 'b'")
    agents.mock.set_script(
        [
            [read(name), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [bump, say("b: bumped it")] if host == "codex" else [read(name), bump, say("b: bumped it")],
        ]
    )
    b = _b_while_a_waits(run, agents)
    agent, named = NAMES[host]
    _told_once(agents, f"- app.py was edited by {agent} session {named(b)}")


def _b_while_a_waits(run: Callable[[str], Any], agents: AgentEnv) -> Path:
    """A checks the app and waits; meanwhile B bumps its version (the scripts are set): B's transcript."""
    return _a_then_b(
        lambda: run("a: check the app"),
        lambda: run("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )


def _told_once(agents: AgentEnv, line: str) -> None:
    """The note with ``line`` reached A's model, and once: A's last request (the whole conversation)
    holds it once."""
    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    start = text.index(NEWS_HEADER)
    print(text[start : text.index("after you read or wrote it", start) + 26])  # the report quotes it
    assert line in text, text
    last = [r for r in agents.mock.requests if r.turn == 0][-1].text()
    assert last.count(NEWS_HEADER) == 1, last
    assert "ERROR" not in agents.sidelight_log


@pytest.mark.parametrize("host", ["pi", "opencode", "copilot"])
def test_a_siblings_edit_is_heard_within_the_turn_beyond_command_hooks(agents: AgentEnv, host: str) -> None:
    """Pi's extension appends the note to the tool's result content (`tool_result`), opencode's plugin to
    the tool's output (`tool.execute.after`); GitHub Copilot CLI's `postToolUse` gives it as top-level
    `additionalContext`, which Copilot appends to the tool's result. Each keeps it in A's transcript,
    where sidelight's reader does not show it as what the tool said."""
    run = host_runner(agents, host)
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), bash("true"), say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )

    b = _b_while_a_waits(run, agents)
    named = {"copilot": short_id(b.parent.name), "pi": b.stem[-8:], "opencode": ""}[host]
    _told_once(agents, f"- app.py was edited by {host} session {named}")
    # The host keeps the note in A's transcript; sidelight's reader never shows it as what a tool said.
    kept = [p for p in _transcripts(agents, host) if NEWS_HEADER in p.read_text()]
    assert kept, _transcripts(agents, host)
    for path in kept:
        assert NEWS_MARKER not in read_session_log(path, host)


def _transcripts(agents: AgentEnv, host: str) -> list[Path]:
    if host == "opencode":  # sidelight's export of opencode's database
        return sorted(Path(export_dir(agents.home / ".local" / "state" / "sidelight", host)).glob("*.jsonl"))
    pattern = {"pi": ".pi/agent/sessions/*/*.jsonl", "copilot": ".copilot/session-state/*/events.jsonl"}[host]
    return sorted(agents.home.glob(pattern))
