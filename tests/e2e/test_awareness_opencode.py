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
from typing import TYPE_CHECKING

import pytest

import sidelight
from sidelight.plugins import get_plugins
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write
from tests.support.reference import opencode_counts

if TYPE_CHECKING:
    from tests.e2e.mockapi import MockAPI

pytestmark = pytest.mark.e2e


def opencode_digest(mock: MockAPI, prompt: str) -> str | None:
    """The digest in the first chat request that carries `prompt`: opencode sends the plugin's part as
    another text block of the prompt's own user message."""
    for request in mock.model_requests("chat"):
        for message in request.body.get("messages") or []:
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"text": content}]
            texts: list[str] = [
                b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
            ]
            if message.get("role") == "user" and any(prompt in t for t in texts):
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
    export = agents.home / ".local" / "state" / "sidelight" / "opencode" / f"{first.session_id}.jsonl"
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
