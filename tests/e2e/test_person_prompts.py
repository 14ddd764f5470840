"""Only a person's prompt gets a digest, with the real Claude Code CLI: when a background command ends,
Claude Code starts a turn of its own with a `UserPromptSubmit` whose prompt is `<task-notification>...`;
that turn gets no digest, and the news waits for the person's next prompt."""

from __future__ import annotations

import json
import shlex
import time

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, call, say

pytestmark = pytest.mark.e2e


def test_a_background_task_s_notification_gets_no_digest(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    agents.mock.set_script([[bash("echo one"), say("one: done")]])
    one = agents.claude("one: run something")
    assert one.session_id
    # The background command gives session one news while session two waits: a prompt of its own.
    last = json.loads(one.transcript.read_text(encoding="utf-8").splitlines()[-1])
    later = {
        **last,
        "uuid": "later",
        "type": "user",
        "message": {"role": "user", "content": "one: deploy it"},
    }
    later["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    line = agents.root / "later.jsonl"
    line.write_text(json.dumps(later) + "\n", encoding="utf-8")
    command = f"sleep 1; cat {shlex.quote(str(line))} >> {shlex.quote(str(one.transcript))}"
    agents.mock.set_script(
        [
            [
                call("Bash", {"command": command, "description": "bg", "run_in_background": True}),
                say("started"),
            ],
            [say("two: the job finished")],
            [say("two: noted")],
        ]
    )
    two = agents.claude("two: start the job in the background")
    assert two.session_id
    notified = [r for r in agents.mock.model_requests() if "<task-notification>" in r.text()]
    assert notified, agents.mock.summary()  # Claude Code ran the notification's turn
    assert digest_for(agents.mock, "<task-notification>") is None, agents.sidelight_log

    agents.claude("two: anything new?", resume=two.session_id)
    digest = digest_for(agents.mock, "two: anything new?")
    assert digest is not None, (
        f"{agents.sidelight_log}\n{agents.mock.summary()}\n{one.transcript.read_text()[-3000:]}"
    )
    assert short_id(one.session_id) in digest and "one: deploy it" in digest, digest
