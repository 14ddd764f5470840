"""The Agent SDK callback (`sidelight.integrations.agent_sdk`) with the real `claude-agent-sdk` package
driving the real Claude Code binary against the mock.

An SDK session and a plain CLI session share a project; after the CLI session runs a command, the SDK
session's next prompt reaches the model with the digest, through the callback alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.engine.paths import short_id
from sidelight.integrations.agent_sdk import make_session_context_hook
from tests.e2e.conftest import AgentEnv, client_bin, digest_for
from tests.e2e.mockapi import bash, say

pytestmark = pytest.mark.e2e


def test_agent_sdk_callback_injects_the_digest(agents: AgentEnv) -> None:
    import claude_agent_sdk as sdk  # a test dependency (pyproject `test` extra): never skipped

    env = agents.env(
        ANTHROPIC_BASE_URL=agents.mock.base_url,
        ANTHROPIC_API_KEY="dummy",
        IS_SANDBOX="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    # The callback runs in this process: point its settings at the throwaway HOME.
    hook = make_session_context_hook(settings=Settings.load(env=env, home=agents.home))
    calls: list[dict[str, Any]] = []

    async def recording_hook(input_data: Any, tool_use_id: str | None, context: Any) -> Any:
        out = await hook(input_data, tool_use_id, context)
        calls.append({"input": dict(input_data), "output": out})
        return out

    options = sdk.ClaudeAgentOptions(
        cli_path=str(client_bin("claude")),
        cwd=str(agents.project),
        permission_mode="bypassPermissions",
        env=env,
        hooks={"UserPromptSubmit": [sdk.HookMatcher(hooks=[recording_hook])]},
    )
    agents.mock.set_script(
        [[say("sdk: hi")], [bash("echo x > x.log"), say("cli: done")], [say("sdk: noted")]]
    )

    async def drain(client: Any) -> None:
        async for _ in client.receive_response():
            pass

    async def main() -> None:
        async with sdk.ClaudeSDKClient(options=options) as client:
            await client.query("sdk: start")
            await drain(client)
            cli = await asyncio.to_thread(agents.claude, "cli: run a command")
            assert cli.session_id
            calls.append({"cli": cli.session_id})
            await client.query("sdk: what did the others do?")
            await drain(client)

    asyncio.run(main())
    cli_id = next(c["cli"] for c in calls if "cli" in c)
    hooks = [c for c in calls if "input" in c]
    assert [c["input"]["prompt"] for c in hooks] == ["sdk: start", "sdk: what did the others do?"]
    assert hooks[0]["output"] == {}
    out = hooks[1]["output"]["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert short_id(cli_id) in out["additionalContext"] and "ran echo x > x.log" in out["additionalContext"]

    digest = digest_for(agents.mock, "sdk: what did the others do?")
    assert digest is not None and short_id(cli_id) in digest, agents.mock.summary()
