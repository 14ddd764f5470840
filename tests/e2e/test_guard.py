"""The stale-write guard with the real CLIs (docs/guard.md).

Session A reads `app.py` and runs a long command; meanwhile session B changes `app.py`; A then writes
`app.py`: sidelight refuses it once with a line naming B, and A's retry goes through.

Claude Code 2.1.197 refuses a `Write` itself ("File has been modified since read") when the file's
modification time moved after the session's `Read`, before any `PreToolUse` hook runs. So B here puts
back a copy that keeps its older time (`cp -p`, as a restore from a backup, `tar` or `rsync -t` do),
which Claude Code's own check cannot see: only the transcripts say who changed the file, and when.
Qwen Code runs the hook first, then refuses the unchanged retry itself (the file changed since its
read): its session re-reads and edits. The Gemini CLI has no check of its own: the retry goes through.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, edit, read, say, write

pytestmark = pytest.mark.e2e

REFUSED = "sidelight stopped this write once"
#: A's long command: it waits (at most 60 s) until B is done (no `$(...)`: the Gemini CLI refuses it).
WAIT_FOR_B = "timeout 60 sh -c 'until [ -f b.done ]; do sleep 0.2; done'; sleep 3"


def _wait(predicate: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}", pytrace=False)
        time.sleep(0.1)


def _refusal(agents: AgentEnv) -> str:
    text = agents.mock.all_text()
    assert REFUSED in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    start = text.index(REFUSED)
    return text[start : text.index("will go through", start) + len("will go through")]


def _a_then_b(start_a: Any, run_b: Any, b_prompt: str, b_left: str, agents: AgentEnv) -> Path:
    """Starts A (``start_a()``, in a thread), runs B (``run_b()``) once A has read the file, checks that
    B left ``app.py`` holding ``b_left``, then lets A go on (its long command waits for ``b.done``); B's
    transcript (the one holding its prompt: A's may have changed during B's run too)."""
    runs: dict[str, Any] = {}
    a = threading.Thread(target=lambda: runs.setdefault("a", start_a()))
    a.start()
    try:
        # A has read app.py (its second request carries the result) before B starts.
        _wait(lambda: any(r.turn == 0 and r.step == 1 for r in agents.mock.requests), "A's read")
        b = run_b()
        assert (agents.project / "app.py").read_text() == b_left
        own: Path
        (own,) = [p for p in b.transcripts if b_prompt in p.read_text()]
    finally:
        (agents.project / "b.done").touch()
        a.join(timeout=180)
    assert runs["a"].session_id
    return own


def test_claude_code_stale_write_refused_once_then_retried(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    orig = agents.project / "app.orig"
    orig.write_text("VERSION = 'b'\n")
    an_hour_ago = time.time() - 3600
    os.utime(orig, (an_hour_ago, an_hour_ago))
    agents.mock.set_script(
        [
            [
                read(str(app)),
                bash(WAIT_FOR_B),
                write(str(app), "VERSION = 'a'\n"),
                write(str(app), "VERSION = 'a'\n"),
                say("a: done"),
            ],
            [bash("cp -p app.orig app.py"), say("b: restored it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.claude("a: change the app"),
        lambda: agents.claude("b: restore the app"),
        "b: restore the app",
        "VERSION = 'b'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    assert f"app.py was changed by claude session {short_id(b.stem)}" in line, line
    assert "with `cp -p app.orig app.py`" in line, line
    assert "app.py" in line and "Re-read" in line, line
    assert app.read_text() == "VERSION = 'a'\n"  # the retry went through
    assert "ERROR" not in agents.sidelight_log


def test_codex_apply_patch_stale_write_refused_once_then_retried(agents: AgentEnv) -> None:
    agents.install_sidelight("codex")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\nNAME = 'app'\n")
    agents.mock.set_script(
        [
            [
                read("app.py"),
                bash(WAIT_FOR_B),
                edit("app.py", "NAME = 'app'", "NAME = 'a'"),
                edit("app.py", "NAME = 'app'", "NAME = 'a'"),
                say("a: done"),
            ],
            [edit("app.py", "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: agents.codex("a: rename the app"),
        lambda: agents.codex("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )
    b_id = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", b.name)
    assert b_id is not None, b

    line = _refusal(agents)
    print(line)  # the report quotes it
    assert f"app.py was edited by codex session {short_id(b_id.group(0))}" in line, line
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # the retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log


@pytest.mark.parametrize("host", ["qwen", "gemini"])
def test_stale_edit_refused_once_qwen_gemini(agents: AgentEnv, host: str) -> None:
    """Qwen Code refuses an edit of a file changed since its read itself, but after the hook: the
    guard's line comes first and names B, and the way on is to re-read. The Gemini CLI has no check of
    its own: the retry as is goes through."""
    agents.install_sidelight(host)
    run = agents.qwen if host == "qwen" else agents.gemini
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\nNAME = 'app'\n")
    rename = edit(str(app), "NAME = 'app'", "NAME = 'a'")
    again = [read(str(app)), rename] if host == "qwen" else [rename]
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), rename, *again, say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: run("a: rename the app"),
        lambda: run("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    b_name = short_id(b.stem) if host == "qwen" else b.stem.rsplit("-", 1)[-1]
    assert f"app.py was edited by {host} session {b_name}" in line, line
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's edit went through, B's change kept
    assert "ERROR" not in agents.sidelight_log
