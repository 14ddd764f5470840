"""One project, three agents: a Claude Code session is told what a Pi and a Codex session did there.

Only Claude Code has sidelight's hook; the Pi and Codex sessions are found by their own resolvers
(`~/.pi/agent/sessions/--<cwd>--/`, `~/.codex/sessions/YYYY/MM/DD/`) and count as siblings because
they ran in the same directory.
"""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e


def test_claude_code_sees_pi_and_codex_in_the_same_project(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    agents.mock.set_script(
        [
            [say("cc: hello")],
            [write(str(agents.project / "pi.txt"), "from pi\n"), say("pi: wrote it")],
            [bash("echo codex > codex.log"), say("codex: ran it")],
            [say("cc: noted")],
            [say("cc: quiet")],
        ]
    )
    cc = agents.claude("cc: start")
    pi = agents.pi("pi: write a file")
    codex = agents.codex("codex: run a command")
    assert pi.session_id and codex.session_id
    agents.claude("cc: what happened here?", resume=cc.session_id)

    digest = digest_for(agents.mock, "cc: what happened here?")
    assert digest is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    lines = [line for line in digest.splitlines() if line.startswith("- ")]
    assert len(lines) == 2, digest
    (pi_line,) = [line for line in lines if short_id(pi.session_id) in line]
    (codex_line,) = [line for line in lines if short_id(codex.session_id) in line]
    assert pi_line.startswith("- pi ") and "wrote pi.txt" in pi_line and "pi: write a file" in pi_line, digest
    assert codex_line.startswith("- codex ") and "ran echo codex > codex.log" in codex_line, digest
    assert "codex: run a command" in codex_line, digest
    assert lines[0] == codex_line  # the most recent first

    agents.claude("cc: and now?", resume=cc.session_id)
    assert digest_for(agents.mock, "cc: and now?") is None, agents.sidelight_log
