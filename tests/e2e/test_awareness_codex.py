"""Cross-session awareness with the real Codex CLI (`codex exec`) and `sidelight install codex`.

The same story as with Claude Code, through Codex's command hooks (`~/.codex/hooks.json`, the `hooks`
feature flag, `--dangerously-bypass-hook-trust`): the digest reaches the Responses API as a
`developer` message right after the prompt.
"""

from __future__ import annotations

import tomllib

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e


def test_two_codex_sessions_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("codex")
    config = tomllib.loads((agents.home / ".codex" / "config.toml").read_text())
    assert config["features"]["hooks"] is True and config["model_provider"] == "mock"

    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [say("hello from one")],
            [say("hello from two")],
            [bash("echo built > build.log"), write(str(notes), "release notes\n"), say("one: all set")],
            [say("two: noted")],
            [say("two: still here")],
            [bash("ls -la"), say("one: listed")],
            [say("two: noted again")],
        ]
    )
    one = agents.codex("one: start")
    two = agents.codex("two: start")
    assert one.session_id and two.session_id and one.session_id != two.session_id
    agents.codex("one: please run the build and write notes", resume=one.session_id)
    assert notes.read_text() == "release notes\n"

    agents.codex("two: what changed?", resume=two.session_id)
    digest = digest_for(agents.mock, "two: what changed?")
    assert digest is not None, f"no digest reached the model\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line, digest
    assert line.startswith(f"- codex {short_id(one.session_id)} ("), digest
    assert "-> wrote notes.txt; ran echo built > build.log" in line, digest
    assert "one: please run the build" in line, digest

    agents.codex("two: anything else?", resume=two.session_id)
    assert digest_for(agents.mock, "two: anything else?") is None, agents.sidelight_log

    agents.codex("one: list the files", resume=one.session_id)
    agents.codex("two: and now?", resume=two.session_id)
    later = digest_for(agents.mock, "two: and now?")
    assert later is not None, agents.sidelight_log
    (line,) = [line for line in later.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line and "ran ls -la" in line, later
    assert "wrote" not in line and "please run the build" not in line, later
    assert "ERROR" not in agents.sidelight_log
