"""Digest lines that name things, and conflicts first (issue 17), with the real CLIs.

A Claude Code session writes `app.py`; a Pi session writes a plan and runs two commands: the Claude
session's next prompt names `pi`, the plan and the latest command. Then a Codex session edits `app.py`
and the Pi session runs one more command (so it is the most recent): the Claude session's next digest
lists the Codex line first, saying that it touched `app.py` too.
"""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, edit, say, write

pytestmark = pytest.mark.e2e


def _lines(digest: str) -> list[str]:
    return [line for line in digest.splitlines() if line.startswith("- ")]


def test_lines_name_the_agent_files_and_commands_and_conflicts_come_first(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    app = agents.project / "app.py"
    plan = agents.project / "pi_plan.md"
    agents.mock.set_script(
        [
            [write(str(app), "VERSION = 1\n"), say("cc: app written")],
            [
                write(str(plan), "hello plan\nhello again\n"),
                bash("wc -l pi_plan.md"),
                bash("grep -c hello pi_plan.md"),
                say("Plan written."),
            ],
            [say("cc: noted")],
            [edit(str(app), "VERSION = 1", "VERSION = 2"), say("codex: bumped")],
            [bash("echo later > later.log"), say("pi: later")],
            [say("cc: noted again")],
        ]
    )
    cc = agents.claude("cc: write the app")
    pi = agents.pi("write the plan")
    assert cc.session_id and pi.session_id and plan.is_file()
    agents.claude("cc: what happened?", resume=cc.session_id)

    digest = digest_for(agents.mock, "cc: what happened?")
    assert digest is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    print(digest)  # the report quotes these lines
    (line,) = _lines(digest)
    assert line.startswith(f"- pi {short_id(pi.session_id)} ("), digest
    assert '"write the plan" -> wrote pi_plan.md; ran grep -c hello pi_plan.md (+1)' in line, digest
    assert line.endswith('— last: "Plan written."'), digest
    assert "touched by you" not in line, digest

    codex = agents.codex("codex: bump the version")
    assert codex.session_id and app.read_text() == "VERSION = 2\n"
    agents.pi("one more thing", session=pi.transcript)
    agents.claude("cc: and now?", resume=cc.session_id)

    later = digest_for(agents.mock, "cc: and now?")
    assert later is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    print(later)
    first, second = _lines(later)
    # Codex is older than Pi's last command, but it changed a file this session wrote: it comes first.
    assert first.startswith(f"- codex {short_id(codex.session_id)} ("), later
    assert "[also touched by you: app.py]" in first and "-> edited app.py" in first, later
    assert second.startswith(f"- pi {short_id(pi.session_id)} ("), later
    assert "ran echo later > later.log" in second and "touched by you" not in second, later
    assert "ERROR" not in agents.sidelight_log
