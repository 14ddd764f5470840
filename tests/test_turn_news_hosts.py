"""News within the turn (docs/digest.md) of the hosts beyond the command-hook protocol: sidelight's Pi
extension (``tool_result``), its opencode plugin (``tool.execute.after``) and GitHub Copilot CLI's
``postToolUse``. Session A (of the host under test) read ``app.py`` ten minutes ago; a Claude Code
session B edited it two minutes ago; after A's next tool call the note is given once, in the host's
shape, and sidelight's reader does not show it as what the tool said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidelight.features import news
from sidelight.features.history import INJECTED_HEADERS, strip_injected
from sidelight.features.reader import NEWS_MARKER, cut_news, result_line
from sidelight.hostio import is_after_tool, is_before_tool
from tests.test_edit_guard import World
from tests.test_guard_hosts import (
    PI_A,
    _b_edits,
    _copilot_pre,
    _copilot_session,
    _pi_session,
    hook,
)
from tests.test_guard_hosts import world as world  # the fixture: B's prompt five minutes ago

NOTE = "- app.py was edited by claude session bbbbbbbb 2m ago, after you read or wrote it"


@pytest.fixture(autouse=True)
def no_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(news, "NEWS_INTERVAL", 0.0)


def _copilot_post(world: World, tool: str = "bash") -> dict[str, Any]:
    result = {"resultType": "success", "textResultForLlm": "ok"}
    return {**_copilot_pre(world, tool, {"command": "ls"}), "toolResult": result}


def _pi_after(world: World, path: Path, tool: str = "bash") -> dict[str, Any]:
    return {
        "event": "after_tool",
        "session_file": str(path),
        "session_id": PI_A,
        "cwd": str(world.project),
        "tool_name": tool,
    }


def test_the_shapes_are_after_tool_events_before_any_injector_is_loaded(world: World) -> None:
    assert is_after_tool(_copilot_post(world)) and not is_before_tool(_copilot_post(world))
    assert is_after_tool({"event": "after_tool"}) and not is_before_tool({"event": "after_tool"})
    assert not is_after_tool(_copilot_pre(world)) and not is_after_tool({"event": "before_tool"})


# --- GitHub Copilot CLI ------------------------------------------------------------------------------------


def test_copilot_post_tool_use_tells_once_at_top_level(world: World) -> None:
    _copilot_session(world)
    _b_edits(world)
    out = hook("copilot", _copilot_post(world))
    assert out is not None
    answer = json.loads(out)
    assert set(answer) == {"additionalContext"}  # Copilot reads only the top-level key
    assert answer["additionalContext"] == f"{news.NEWS_HEADER}\n{NOTE}"
    assert hook("copilot", _copilot_post(world, "view")) is None  # once


def test_copilot_nothing_when_nothing_collides(world: World) -> None:
    _copilot_session(world)
    assert hook("copilot", _copilot_post(world)) is None  # B changed nothing A touched


def test_copilot_nothing_when_news_is_off_or_the_input_is_bad(world: World) -> None:
    _copilot_session(world)
    _b_edits(world)
    assert hook("copilot", _copilot_post(world), SIDELIGHT_TURN_NEWS="off") is None
    assert hook("copilot", {**_copilot_post(world), "sessionId": "../x"}) is None
    assert hook("copilot", {**_copilot_post(world), "sessionId": 7}) is None
    assert hook("copilot", _copilot_post(world)) is not None  # still news once it is on


def test_copilot_installs_the_post_tool_use_hook_and_uninstall_takes_it_away(home: Path) -> None:
    from sidelight.agents.copilot import install

    path = home / ".copilot" / "hooks" / "sidelight.json"
    before = install.copilot_hooks("sidelight hook copilot")
    del before["hooks"]["postToolUse"]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(before))  # the file an older sidelight wrote
    assert install.install_copilot().changed
    hooks = json.loads(path.read_text())["hooks"]
    (post,) = hooks["postToolUse"]
    assert "matcher" not in post and post["bash"].endswith(" hook copilot")
    assert post["timeoutSec"] == 10  # seconds, as Copilot counts them
    assert not install.install_copilot().changed
    assert install.uninstall_copilot().changed
    assert not path.exists()


# --- Pi (sidelight's extension: its tool_result handler sends after_tool) ----------------------------------


def test_pi_after_tool_tells_once_as_bare_text(world: World) -> None:
    from sidelight.agents import pi

    path = _pi_session(world)
    event = pi.read_event(_pi_after(world, path))
    assert event is not None
    assert (event.event, event.session_id, event.transcript_path) == ("PostToolUse", PI_A, path)
    _b_edits(world)
    assert hook("pi", _pi_after(world, path)) == f"{news.NEWS_HEADER}\n{NOTE}"
    assert hook("pi", _pi_after(world, path, "read")) is None  # once
    assert hook("pi", {**_pi_after(world, path), "session_file": 5, "session_id": None}) is None


def test_pi_nothing_when_nothing_collides_or_news_is_off(world: World) -> None:
    path = _pi_session(world)
    assert hook("pi", _pi_after(world, path)) is None
    _b_edits(world)
    assert hook("pi", _pi_after(world, path), SIDELIGHT_TURN_NEWS="off") is None


def test_pi_extension_appends_the_note_to_the_tool_result() -> None:
    from sidelight.agents.pi.install import EXTENSION, pi_extension_source

    source = EXTENSION.read_text()
    assert 'pi.on("tool_result"' in source and 'describe("after_tool"' in source
    assert '{ content: [...event.content, { type: "text", text }] }' in source
    assert 'pi.on("tool_result"' in pi_extension_source(["/x/sidelight"])


# --- opencode (sidelight's plugin: its tool.execute.after sends after_tool) -------------------------------


def test_opencode_after_tool_reads_any_tool_and_renders_bare_text(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.agents import opencode

    seen: list[Any] = []

    def told(event: Any, *args: object, **kwargs: object) -> news.News:
        seen.append(event)
        return news.News("opencode:ses_1", f"{news.NEWS_HEADER}\n{NOTE}", [], {})

    monkeypatch.setattr(news, "check_after_tool", told)
    monkeypatch.setattr(news, "record_news", lambda *args: None)
    payload = {
        "event": "after_tool",
        "session_id": "ses_1",
        "message_id": None,
        "cwd": str(home),
        "prompt": None,
        "tool_name": "bash",
    }
    assert hook("opencode", payload) == f"{news.NEWS_HEADER}\n{NOTE}"
    (event,) = seen
    assert (event.host, event.event, event.session_id, event.cwd) == (
        "opencode",
        "PostToolUse",
        "ses_1",
        home,
    )
    assert hook("opencode", payload, SIDELIGHT_TURN_NEWS="off") is None
    assert len(seen) == 1
    assert opencode.read_event({**payload, "session_id": 7}) is not None  # no session: news finds none


def test_opencode_plugin_appends_the_note_to_the_tool_output() -> None:
    from sidelight.agents.opencode.install import PLUGIN

    source = PLUGIN.read_text()
    after = source[source.index('"tool.execute.after"') : source.index('"chat.message": async')]
    assert 'event: "after_tool"' in after
    assert "output.output = `${output.output}\\n\\n${news}`" in after


# --- sidelight's own text in the hosts' transcripts ----------------------------------------------------


def test_the_reader_never_shows_the_note_as_what_a_tool_said() -> None:
    note = f"{news.NEWS_HEADER}\n{NOTE}"
    assert news.NEWS_HEADER.startswith(NEWS_MARKER) and NEWS_MARKER in INJECTED_HEADERS
    # Pi joins the result's text blocks with a line break; opencode and Qwen with a blank line; Copilot
    # after its own line; the Gemini CLI in a tag.
    for result in (
        f"boom\nexit code 1\n{note}",
        f"boom\nexit code 1\n\n{note}",
        f'boom\nexit code 1\n\nTool "bash" failed. Additional guidance from postToolUse hooks:\n{note}',
        f"boom\nexit code 1\n\n<hook_context>{note}</hook_context>",
    ):
        shown = result_line(result)
        assert shown is not None and "while you worked" not in shown and "app.py" not in shown, shown
    assert result_line(f"ok\n{note}") == "ok"
    assert cut_news("no news here") == "no news here"
    assert strip_injected(f"ok\n\n{note}") == "ok"


def _line_of(host: str, note: str) -> dict[str, Any]:
    """The transcript line where ``host`` keeps a note appended to a tool's result (as seen with the
    real CLIs: tests/e2e/test_turn_news.py)."""
    if host == "pi":
        content = [{"type": "text", "text": "(no output)"}, {"type": "text", "text": note}]
        return {"type": "message", "message": {"role": "toolResult", "content": content}}
    if host == "opencode":
        part = {"type": "tool", "tool": "bash", "state": {"status": "completed", "output": f"ok\n\n{note}"}}
        return {"type": "message", "parts": [part]}
    text = f'\nok\n\nTool "bash" succeeded. Additional guidance from postToolUse hooks:\n{note}'
    return {"type": "tool.execution_complete", "data": {"result": {"content": text}}}


@pytest.mark.parametrize("host", ["pi", "opencode", "copilot"])
def test_each_agent_says_where_it_keeps_the_note(host: str) -> None:
    from sidelight._fast.jsonio import strings
    from sidelight.plugins import get_plugins

    agent = get_plugins().agent(host)
    assert agent is not None and agent.injected_values is not None
    assert agent.can("after_tool", "inject")
    note = f"{news.NEWS_HEADER}\n{NOTE}"
    found = [t for v in agent.injected_values(_line_of(host, note)) for t in strings(v)]
    assert any(NOTE in text for text in found), found
