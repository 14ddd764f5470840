"""A ready ``UserPromptSubmit`` hook for the Python ``claude-agent-sdk``.

::

    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher
    from sidelight.integrations.agent_sdk import session_context_hook

    options = ClaudeAgentOptions(
        hooks={"UserPromptSubmit": [HookMatcher(hooks=[session_context_hook])]},
    )

On each prompt the callback returns
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": DIGEST}}`` when the
session's siblings did something new since it last looked, else ``{}``. The work (listing sessions,
scanning transcripts) runs in a worker thread, so the event loop is never blocked, and nothing it does
can raise into the agent: errors are logged to ``<state dir>/sidelight.log``.
:func:`make_session_context_hook` builds one with its own settings or plugins.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from sidelight._fast.logs import get_logger

if TYPE_CHECKING:
    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = ["HOST", "make_session_context_hook", "session_context_hook"]

logger = get_logger(__name__)

#: The injector the callback speaks through (its agent's, :mod:`sidelight.agents.claude_code`).
HOST = "agent-sdk"

#: The callback's type. It returns ``Any`` so that it fits ``HookMatcher(hooks=[...])`` under a type
#: checker without sidelight depending on ``claude-agent-sdk``'s types (it returns a plain dict).
HookCallback = Callable[[Any, "str | None", Any], Coroutine[Any, Any, Any]]


def _context(input_data: Any, settings: Settings | None, plugins: Plugins | None) -> dict[str, Any]:
    from sidelight.features.hook import handle_hook

    if not isinstance(input_data, Mapping):
        return {}
    output = handle_hook(HOST, dict(input_data), settings=settings, plugins=plugins)
    if not output:
        return {}
    data = json.loads(output)
    return data if isinstance(data, dict) else {}


def make_session_context_hook(
    *, settings: Settings | None = None, plugins: Plugins | None = None
) -> HookCallback:
    """A ``UserPromptSubmit`` callback like :func:`session_context_hook`, with its own settings/plugins."""

    async def session_context_hook(input_data: Any, tool_use_id: str | None, context: Any) -> Any:
        try:
            return await asyncio.to_thread(_context, input_data, settings, plugins)
        except Exception:  # a hook never breaks its host
            logger.warning("sidelight's session context hook failed; nothing injected", exc_info=True)
            return {}

    return session_context_hook


#: The ``UserPromptSubmit`` callback with the default settings (environment and config file).
session_context_hook: HookCallback = make_session_context_hook()
