"""Factory Droid with the real CLI (`@factory/cli-linux-x64`, driven over its JSON-RPC path by
`tests/e2e/droid.py`) and `sidelight install droid`, beside Claude Code (docs/hosts-next.md).

One project: a Droid session starts; Claude Code writes a plan; Droid's next prompt (the session resumed in
a new process, `droid.load_session`) gets that in its digest, a user message of its own before the prompt,
then Droid reads `app.py`, runs a command and writes `notes.txt`; Claude Code's next prompt hears all of it
and changes `app.py`; Droid, resumed again, tries to edit `app.py` without reading it again: its
`PreToolUse` hook refuses the write once (the model gets `Error: <reason>`), and the retry goes through.
Within a turn, Droid's `PostToolUse` hook tells its model of a sibling's edit to a file it read. Skipped
when Droid's binary is not installed.
"""

from __future__ import annotations

import json

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.droid import droid_bin, droid_rpc
from tests.e2e.mockapi import bash, edit, read, say, write
from tests.e2e.test_guard import REFUSED, WAIT_FOR_B, _a_then_b
from tests.e2e.test_turn_news import _told_once

pytestmark = pytest.mark.e2e


def _droid_digest(agents: AgentEnv, prompt: str) -> str | None:
    """The digest Droid sent with ``prompt``: a user message of its own before the prompt's (and before
    Droid's system-reminder message), in the first request that carries the prompt."""
    request = next(r for r in agents.mock.model_requests("chat") if prompt in r.text())
    messages = request.body["messages"]
    at = max(i for i, m in enumerate(messages) if m["role"] == "user" and m["content"] == prompt)
    found = None
    for message in reversed(messages[:at]):
        if message["role"] != "user":
            break
        if isinstance(message["content"], str) and message["content"].startswith(DIGEST_HEADER):
            found = message["content"].split("\n\n", 1)[0]
    return found


def test_droid_and_claude_code_hear_each_other_and_a_stale_write_is_refused(agents: AgentEnv) -> None:
    droid_bin()
    agents.install_sidelight("claude-code", "droid")
    hooks = json.loads((agents.home / ".factory" / "hooks.json").read_text())
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(" hook droid")

    plan, notes, app = (agents.project / name for name in ("plan.txt", "notes.txt", "app.py"))
    app.write_text("VERSION = 0\nNAME = 'app'\n")
    rename = edit(str(app), "NAME = 'app'", "NAME = 'd'")
    agents.mock.set_script(
        [
            [say("d: hello")],
            [write(str(plan), "the plan\n"), say("cc: planned")],
            [
                read(str(app)),
                bash("echo built > build.log"),
                write(str(notes), "release notes\n"),
                say("d: built"),
            ],
            [edit(str(app), "VERSION = 0", "VERSION = 'cc'"), say("cc: bumped")],
            [rename, rename, say("d: renamed")],
        ]
    )
    first = droid_rpc(agents, "d: start")
    cc = agents.claude("cc: write the plan")
    assert cc.session_id and plan.exists()

    # (b) Droid's prompt, on its JSON-RPC path, gets what the Claude Code sibling did.
    again = droid_rpc(agents, "d: build it", resume=first.session_id)
    assert again.transcript == first.transcript
    assert notes.read_text() == "release notes\n" and (agents.project / "build.log").exists()
    digest = _droid_digest(agents, "d: build it")
    assert digest is not None, f"no digest reached the model\n{agents.sidelight_log}\n{agents.mock.summary()}"
    print(digest)  # the report quotes it
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- claude {short_id(cc.session_id)} ("), digest
    assert "wrote plan.txt" in line and "cc: planned" in line, digest

    # (a) A Claude Code prompt hears what the Droid session did: its file and its command.
    agents.claude("cc: what did droid do?", resume=cc.session_id)
    back = digest_for(agents.mock, "cc: what did droid do?")
    assert back is not None, agents.sidelight_log
    print(back)  # the report quotes it
    (line,) = [line for line in back.splitlines() if line.startswith("- ")]
    assert line.startswith("- droid d: start ("), back  # named by its title
    assert "notes.txt" in line and "echo built > build.log" in back and "d: built" in line, back
    assert app.read_text() == "VERSION = 'cc'\nNAME = 'app'\n"

    # (c) Droid's write to the file Claude Code changed since Droid read it is refused once, then retried.
    droid_rpc(agents, "d: rename the app", resume=first.session_id)
    text = agents.mock.all_text()
    assert REFUSED in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    start = text.index(REFUSED)
    refusal = text[start : text.index("will go through", start) + len("will go through")]
    print(refusal)  # the report quotes it
    assert f"app.py was edited by claude session {short_id(cc.session_id)}" in refusal, refusal
    assert "Error: " + REFUSED in text  # as Droid words a refused tool's result
    assert (
        app.read_text() == "VERSION = 'cc'\nNAME = 'd'\n"
    )  # the retry went through, the sibling's change kept

    listed = agents.sidelight("sessions").stdout
    assert "d: start" in listed and short_id(cc.session_id) in listed, listed
    assert "ERROR" not in agents.sidelight_log and "WARNING" not in agents.sidelight_log


def test_droid_hears_a_siblings_edit_within_its_turn(agents: AgentEnv) -> None:
    """Droid reads `app.py`, then runs a long command; meanwhile Claude Code edits `app.py`; Droid's
    `PostToolUse` hook tells its model, in the request after the command's result, once."""
    droid_bin()
    agents.install_sidelight("claude-code", "droid")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), bash("true"), say("d: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    b = _a_then_b(
        lambda: droid_rpc(agents, "d: check the app"),
        lambda: agents.claude("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )
    _told_once(agents, f"- app.py was edited by claude session {short_id(b.stem)}")
