"""The warm path with the real CLIs: a `sidelight watch` runs, and the Claude Code, Pi and Codex hooks
sidelight installed are answered by it (`<state dir>/hook.sock`) rather than by each hook process loading
sidelight.

Each session is told what the others did, each news once; the watcher's snapshot counts the hooks it
answered and declined none, and `sidelight status` says so.
"""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for, sidelight_command
from tests.e2e.mockapi import bash, say, write
from tests.support import watching

pytestmark = pytest.mark.e2e


def test_hooks_of_claude_code_pi_and_codex_answered_by_the_watcher(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "pi", "codex")
    state = agents.home / ".local" / "state" / "sidelight"
    watcher = watching.start_serving([*sidelight_command(), "watch"], agents.env(), agents.project, state)
    try:
        agents.mock.set_script(
            [
                [say("cc: hello")],
                [write(str(agents.project / "pi.txt"), "from pi\n"), say("pi: wrote it")],
                [bash("echo built > build.log"), say("cc: built")],
                [say("codex: hello")],
                [say("pi: noted")],
                [say("cc: quiet")],
            ]
        )
        cc = agents.claude("cc: start")
        pi = agents.pi("pi: write a file")
        agents.claude("cc: build it", resume=cc.session_id)
        codex = agents.codex("codex: what is going on here?")
        assert cc.session_id and pi.session_id and codex.session_id
        agents.pi("pi: what happened?", session=pi.transcript)
        agents.claude("cc: anything new?", resume=cc.session_id)

        told_cc = digest_for(agents.mock, "cc: build it")
        assert told_cc is not None, (
            f"{watching.snapshot(state)}\n{agents.sidelight_log}\n{agents.mock.summary()}"
        )
        assert short_id(pi.session_id) in told_cc and "wrote pi.txt" in told_cc, told_cc
        told_pi = digest_for(agents.mock, "pi: what happened?")
        assert told_pi is not None, agents.sidelight_log
        assert short_id(cc.session_id) in told_pi and "ran echo built > build.log" in told_pi, told_pi
        assert short_id(codex.session_id) in told_pi, told_pi
        told_codex = digest_for(agents.mock, "codex: what is going on here?")
        assert told_codex is not None, agents.sidelight_log
        # (Claude Code's session ended with its run: it reaches the new Codex session as a handoff.)
        assert short_id(pi.session_id) in told_codex and "wrote pi.txt" in told_codex, told_codex
        # Only what is new since: Pi's last prompt, not the file it wrote before (told once).
        again = digest_for(agents.mock, "cc: anything new?")
        assert again is not None and "pi: what happened?" in again, again
        assert "wrote pi.txt" not in again, again

        watching.answered(state, 7)
        hooks = watching.snapshot(state)["hooks"]
        # Claude Code's prompts and starts, Pi's and Codex's prompts (at least one each), none declined.
        assert hooks["answered"] >= 7 and hooks["declined"] == 0, hooks
        assert "hooks: answered warm by the watcher" in agents.sidelight("status").stdout
    finally:
        errors = watching.stop(watcher)
    assert watcher.returncode == 0, errors.decode()
    assert "ERROR" not in agents.sidelight_log
