"""Cross-session awareness with the real Claude Code CLI: `sidelight install claude-code`, two sessions.

Session 1 runs a command and writes a file; session 2's next prompt reaches the model with a digest
that names session 1 and counts what it did; a prompt with nothing new carries no digest; and session
1's later activity shows up in session 2's next prompt, only the new part.
"""

from __future__ import annotations

import json

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for, sidelight_command
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e


def installed_commands(agents: AgentEnv) -> list[str]:
    settings = json.loads((agents.home / ".claude" / "settings.json").read_text())
    return [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]


def test_two_claude_code_sessions_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    commands = installed_commands(agents)
    # prompt, start, end, the stale-write guard's PreToolUse (docs/guard.md) and the news within the
    # turn's PostToolUse (docs/digest.md)
    assert len(commands) == 5 and all(c.endswith(" hook claude-code") for c in commands)

    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [say("hello from one")],  # s1: "one: start"
            [say("hello from two")],  # s2: "two: start"
            [bash("echo built > build.log"), write(str(notes), "release notes\n"), say("one: all set")],
            [say("two: noted")],  # s2: sees s1's command and edit
            [say("two: still here")],  # s2: nothing new
            [bash("ls -la"), say("one: listed")],  # s1: later activity
            [say("two: noted again")],  # s2: only the new part
        ]
    )
    one = agents.claude("one: start")
    two = agents.claude("two: start")
    assert one.session_id and two.session_id and one.session_id != two.session_id
    agents.claude("one: please run the build and write notes", resume=one.session_id)
    assert notes.read_text() == "release notes\n"

    agents.claude("two: what changed?", resume=two.session_id)
    digest = digest_for(agents.mock, "two: what changed?")
    log = agents.sidelight_log
    assert digest is not None, f"no digest reached the model\n{log}\n{agents.mock.summary()}"
    assert digest.startswith(DIGEST_HEADER)
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line, digest
    assert line.startswith(f"- claude {short_id(one.session_id)} ("), digest
    assert "-> wrote notes.txt; ran echo built > build.log —" in line, digest
    assert "one: please run the build" in line, digest
    assert short_id(two.session_id) not in digest  # a session never reports itself

    agents.claude("two: anything else?", resume=two.session_id)
    assert digest_for(agents.mock, "two: anything else?") is None, agents.sidelight_log

    agents.claude("one: list the files", resume=one.session_id)
    agents.claude("two: and now?", resume=two.session_id)
    later = digest_for(agents.mock, "two: and now?")
    assert later is not None, agents.sidelight_log
    (line,) = [line for line in later.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line and "ran ls -la" in line, later
    assert "wrote" not in line and "please run the build" not in line, later  # only the new part
    assert "one: list the files" in line, later

    # Session 1 was told about session 2 too (its first prompts), and the hooks logged no error.
    assert digest_for(agents.mock, "one: please run the build and write notes") is not None
    assert "ERROR" not in agents.sidelight_log


def test_claude_code_hook_is_recorded_but_silent_on_session_start(agents: AgentEnv) -> None:
    """SessionStart and SessionEnd are accepted and recorded; they inject nothing."""
    agents.install_sidelight("claude-code")
    agents.mock.set_script([[say("one")]])
    run = agents.claude("only prompt")
    events_file = agents.home / ".local" / "state" / "sidelight" / "events.jsonl"
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    kinds = [(e["event"], e["session_id"]) for e in events]
    assert ("SessionStart", run.session_id) in kinds and ("SessionEnd", run.session_id) in kinds, kinds
    assert DIGEST_HEADER not in agents.mock.all_text()


def test_claude_code_plugin_dir_hooks_work(agents: AgentEnv) -> None:
    """The Claude Code plugin shipped in the package (`claude --plugin-dir`) injects the digest too."""
    from sidelight.agents.claude_code.install import claude_plugin_dir

    agents.mock.set_script([[say("a")], [bash("true"), say("b")], [say("c")]])
    plugin = ["--plugin-dir", str(claude_plugin_dir())]
    env = {"SIDELIGHT_BIN": sidelight_command()[0]}
    one = agents.claude("p1: hello", extra_args=plugin, env=env)
    agents.claude("p2: run true", extra_args=plugin, env=env)
    agents.claude("p1: news?", resume=one.session_id, extra_args=plugin, env=env)
    digest = digest_for(agents.mock, "p1: news?")
    assert digest is not None and "ran true" in digest, agents.sidelight_log
