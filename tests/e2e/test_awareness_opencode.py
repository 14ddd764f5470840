"""Cross-session awareness with the real opencode CLI and the plugin `sidelight install opencode` puts in
place, beside a real Claude Code session in the same project.

opencode keeps its sessions in SQLite; sidelight exports them read-only to JSONL files of its own and
counts those. Here: opencode runs a command and writes a file, a Claude Code prompt then gets a digest
of it; Claude Code runs a command, and opencode's next prompt gets a digest of that as a synthetic
part of its prompt, which sidelight never counts as a prompt. The counts of the export are checked
against the database, read independently with `sqlite3`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import sidelight
from sidelight.plugins import get_plugins
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write
from tests.support.reference import opencode_counts

if TYPE_CHECKING:
    from tests.e2e.mockapi import MockAPI

pytestmark = pytest.mark.e2e


TITLE_REQUEST = "Generate a title for this conversation"


def user_texts(request_body: dict[str, Any]) -> list[str]:
    """Every text block of the user messages of a chat request."""
    texts: list[str] = []
    for message in request_body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        texts += [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return texts


def opencode_digest(mock: MockAPI, prompt: str) -> str | None:
    """The digest in the first chat request (not a title request) that carries `prompt`: the plugin
    gives it to opencode's chat requests as a user message after the prompt's own."""
    for request in mock.model_requests("chat"):
        texts = user_texts(request.body)
        if any(prompt in t for t in texts) and not any(TITLE_REQUEST in t for t in texts):
            found = [t[t.index(DIGEST_HEADER) :] for t in texts if DIGEST_HEADER in t]
            return found[-1] if found else None
    pytest.fail(f"no chat request carried {prompt!r}\n{mock.summary()}", pytrace=False)


def test_opencode_and_claude_code_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "opencode")
    plugin = agents.home / ".config" / "opencode" / "plugin" / "sidelight.ts"
    assert "sidelight-opencode-plugin" in plugin.read_text()

    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [bash("echo built > build.log"), write(str(notes), "release notes\n"), say("opencode: all set")],
            [say("claude: noted")],
            [bash("echo from claude > claude.log"), say("claude: logged")],
            [say("opencode: seen")],
        ]
    )
    first = agents.opencode("opencode: please build and write notes")
    assert first.session_id, first.describe()
    assert notes.read_text() == "release notes\n"

    # (b) a Claude Code prompt hears what opencode did
    claude = agents.claude("claude: what changed?")
    digest = digest_for(agents.mock, "claude: what changed?")
    assert digest is not None, f"no digest reached Claude\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in digest.splitlines() if line.startswith("- opencode ")]
    assert "opencode: please build and write notes" in line, digest
    assert "wrote notes.txt" in line and "ran echo built > build.log" in line, digest

    # (a) opencode's next prompt hears what Claude Code did since, as a synthetic part
    agents.claude("claude: log something", resume=claude.session_id)
    agents.opencode("opencode: anything new?", session=first.session_id)
    news = opencode_digest(agents.mock, "opencode: anything new?")
    assert news is not None, f"no digest reached opencode\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in news.splitlines() if line.startswith("- claude ")]
    # A first look at the Claude session (opencode never looked at it): its recent turns, quoted from
    # the first prompt they hold (512 KiB reach back to "what changed?").
    assert "ran echo from claude" in line and "claude: logged" in line, news
    assert "claude: what changed?" in line or "claude: log something" in line, news
    assert "opencode" not in news.split("\n", 1)[1], news  # its own session is no sibling of itself

    # Listing the sessions brings the export up to date (as any prompt of any agent does).
    listed = [json.loads(line) for line in agents.sidelight("sessions", "--json").stdout.splitlines()]
    formats = {entry["format"] for entry in listed}
    assert formats == {"claude-code", "opencode"}, listed
    assert len({entry["group"] for entry in listed}) == 1, listed  # one project: siblings

    # The export, counted, against the database read independently: the synthetic part (the digest)
    # is stored by opencode but never counted as a prompt.
    expected = opencode_counts(agents.opencode_db, first.session_id)
    assert expected["synthetic"] >= 1, expected
    export = (
        agents.home / ".local" / "state" / "sidelight" / "exports" / "opencode" / f"{first.session_id}.jsonl"
    )
    get_plugins().formats()  # registers the opencode decoder in this process
    activity = sidelight.scan(export, format="opencode")
    assert activity.messages.user == expected["user"] == 2, (activity, expected)
    assert activity.messages.assistant == expected["assistant"], (activity, expected)
    assert dict(activity.tools) == expected["tools"] == {"bash": 1, "write": 1}, (activity, expected)
    assert activity.categories.command == 1 and activity.categories.edit == 1
    assert list(activity.files_touched) == expected["files"] == [str(notes)]
    assert activity.first_user_text == "opencode: please build and write notes"
    assert activity.last_assistant_text == "opencode: seen"
    assert activity.cwd == str(agents.project)
    assert DIGEST_HEADER not in (activity.last_user_text or "")

    assert "ERROR" not in agents.sidelight_log and "Traceback" not in agents.sidelight_log


def test_what_sidelight_adds_to_a_new_sessions_first_prompt_stays_out_of_its_title_request(
    agents: AgentEnv,
) -> None:
    """opencode names a new session by a request of its own with the first prompt: what sidelight adds
    to that prompt (here the digest, or the handoff of the Claude Code session that ended) reaches the
    chat request, never the title request (which would name the session after its siblings' news), and
    is stored with the prompt, ignored, for the next runs of the session to send again."""
    agents.install_sidelight("claude-code", "opencode")
    agents.mock.set_script(
        [
            [bash("echo from claude > claude.log"), say("claude: logged")],
            [say("opencode: noted")],
            [say("opencode: still here")],
        ]
    )
    agents.claude("claude: log something")
    first = agents.opencode("opencode: hello there")
    assert first.session_id, first.describe()

    requests = agents.mock.model_requests("chat")
    titles = [r for r in requests if any(TITLE_REQUEST in t for t in user_texts(r.body))]
    chats = [
        r
        for r in requests
        if r not in titles and any("opencode: hello there" in t for t in user_texts(r.body))
    ]
    assert titles and chats, f"no title or chat request\n{agents.mock.summary()}"
    added = [t for t in user_texts(chats[0].body) if "opencode: hello there" not in t]
    assert any("echo from claude" in t for t in added), f"{added}\n{agents.sidelight_log}"
    for request in titles:
        assert "opencode: hello there" in request.text()
        assert "echo from claude" not in request.text(), request.text()
        assert not any(t in request.text() for t in added), request.text()

    # A later run of the session sends what was added again, at its place after the first prompt.
    agents.opencode("opencode: and now?", session=first.session_id)
    later = [
        r
        for r in agents.mock.model_requests("chat")
        if any("opencode: and now?" in t for t in user_texts(r.body))
    ]
    assert later and all(t in user_texts(later[0].body) for t in added), agents.mock.summary()
    expected = opencode_counts(agents.opencode_db, first.session_id)
    assert expected["synthetic"] >= 1 and expected["user"] == 2, expected
    assert "ERROR" not in agents.sidelight_log and "Traceback" not in agents.sidelight_log
