"""The built-in Gemini CLI template: its sessions (folded resume files, project groups), its hook protocol
and `sidelight install gemini`. The format itself is tested in the core (`formats/gemini.rs`), against
the reference counter (`tests/e2e/test_awareness_gemini.py`) and on the sample chats (`tests/data/gemini`)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from sidelight import install
from sidelight.agents import gemini
from sidelight.agents.gemini.install import GEMINI_EVENTS
from sidelight.config import Settings
from sidelight.records import HostEvent
from tests.conftest import cli_command
from tests.support import installers

ID = "3eb8120c-e85e-4e91-85fe-2184e7391941"
OTHER = "7b7b7b7b-0000-4000-8000-00000000beef"


def header(session_id: str) -> str:
    return json.dumps({"sessionId": session_id, "projectHash": "x", "startTime": "t", "kind": "main"}) + "\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("GEMINI_CLI_HOME", "SIDELIGHT_BIN", "SIDELIGHT_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    gemini._projects.clear()
    gemini._project_roots.clear()
    return home


def chats(home: Path, project: str) -> Path:
    folder = home / ".gemini" / "tmp" / project / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_sessions_fold_a_resume_file_and_take_their_group_from_projects_json(
    home: Path, tmp_path: Path
) -> None:
    app, site = tmp_path / "work" / "app", tmp_path / "work" / "site"
    app.mkdir(parents=True)
    site.mkdir(parents=True)
    (home / ".gemini").mkdir()
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(app): "app"}}))
    first = chats(home, "app") / "session-2026-11-25T05-41-3eb8120c.jsonl"
    resumed = chats(home, "app") / "session-2026-11-25T05-43-3eb8120c.jsonl"  # a resume a minute later
    other = chats(home, "app") / "session-2026-11-25T06-00-7b7b7b7b.jsonl"
    for path, sid in ((first, ID), (resumed, ID), (other, OTHER)):
        path.write_text(header(sid))
    subagents = chats(home, "app") / ID
    subagents.mkdir()
    (subagents / "helper.jsonl").write_text(header(ID))
    # A folder named only in its `.project_root`, and a legacy whole-file session (not listed).
    (chats(home, "site") / "session-2026-11-25T07-00-5c5c5c5c.jsonl").write_text(header("5c5c5c5c-1"))
    (home / ".gemini" / "tmp" / "site" / ".project_root").write_text(f"{site}\n")
    (chats(home, "site") / "session-2025-01-01T00-00-legacy01.json").write_text("{}")

    settings = Settings.load()
    sessions = {s.key: s for s in gemini.list_sessions(settings)}
    assert sorted(sessions) == ["gemini:3eb8120c", "gemini:5c5c5c5c", "gemini:7b7b7b7b"]
    one = sessions["gemini:3eb8120c"]
    assert (one.path, one.name, one.id, one.format) == (first, "3eb8120c", "3eb8120c", "gemini")
    assert one.extra_paths == (resumed, subagents / "helper.jsonl")
    assert one.group == os.path.realpath(app)
    assert sessions["gemini:5c5c5c5c"].group == os.path.realpath(site)

    # The hook's event names either file of the session, or only the session id.
    for path in (first, resumed):
        event = HostEvent(host="gemini", event="UserPromptSubmit", transcript_path=path, session_id=ID)
        found = gemini.current(event, settings)
        assert found is not None and found.key == one.key and found.path == first
    by_id = gemini.current(HostEvent(host="gemini", event="UserPromptSubmit", session_id=ID), settings)
    assert by_id is not None and by_id.key == one.key
    # Another host's transcript is never a Gemini session.
    elsewhere = HostEvent(host="codex", event="UserPromptSubmit", transcript_path=tmp_path / "x.jsonl")
    assert gemini.current(elsewhere, settings) is None


def test_a_chat_is_named_by_the_summary_gemini_saved_in_it(home: Path) -> None:
    path = chats(home, "app") / "session-2026-11-25T05-41-3eb8120c.jsonl"
    lines = [
        header(ID),
        json.dumps({"$set": {"lastUpdated": "2026-11-25T05:49:38.427Z"}}) + "\n",
        # As Gemini writes them (JSON.stringify: no spaces); the newest summary wins.
        '{"$set":{"summary":"First go"}}\n',
        '{"id":"m1","type":"user","content":[{"text":"a prompt that says \\"$set\\""}]}\n',
        '{"$set":{"summary":"  Fix the flaky login test  "}}\n',
    ]
    path.write_text("".join(lines[:2]))
    settings = Settings.load()
    (session,) = gemini.list_sessions(settings)
    assert session.name == "3eb8120c"  # no summary yet: the short id
    path.write_text("".join(lines))
    (session,) = gemini.list_sessions(settings)
    assert session.name == "Fix the flaky login test"
    path.write_text(header(ID) + '{"$set":{"summary":{"not":"a string"}}}\n')
    (session,) = gemini.list_sessions(settings)
    assert session.name == "3eb8120c"


def test_the_hook_reads_gemini_events_and_answers_in_its_shape() -> None:
    payload = {
        "session_id": ID,
        "transcript_path": "/h/.gemini/tmp/p/chats/session-x-3eb8120c.jsonl",
        "cwd": "/p",
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-11-25T05:41:17.485Z",
        "prompt": "<hook_context>[Session Activity] old</hook_context>\n\nfix the file please",
    }
    event = gemini.read_hook(payload)
    assert event is not None
    assert (event.host, event.event, event.session_id, event.cwd) == (
        "gemini",
        "UserPromptSubmit",
        ID,
        Path("/p"),
    )
    assert event.prompt == "fix the file please"  # a SessionStart context put before it is not the prompt
    out = json.loads(gemini.render_hook(event, '- pi 1 (now): "go <b>" -> ran echo a > a.txt') or "")
    # Gemini escapes `<` and `>` before the model sees them (`&gt;`): none is sent.
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "BeforeAgent",
            "additionalContext": '- pi 1 (now): "go ‹b›" → ran echo a › a.txt',
        }
    }
    start = gemini.read_hook({**payload, "hook_event_name": "SessionStart", "source": "startup"})
    assert start is not None and start.event == "SessionStart"
    assert (
        json.loads(gemini.render_hook(start, "facts") or "")["hookSpecificOutput"]["hookEventName"]
        == "SessionStart"
    )
    assert gemini.render_hook(event, None) is None and gemini.render_hook(event, "") is None
    after = gemini.read_hook({**payload, "hook_event_name": "AfterTool"})  # the news within the turn
    assert after is not None and after.event == "PostToolUse"
    ignored: list[object] = [{**payload, "hook_event_name": "AfterModel"}, [], "text", {}]
    for value in ignored:
        assert gemini.read_hook(value) is None  # type: ignore[arg-type]


def test_the_hook_command_answers_nothing_usable_but_wrong(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_WARM="off")
    for stdin in (
        "not json",
        json.dumps({"hook_event_name": "BeforeAgent", "prompt": "hi", "cwd": str(home)}),
    ):
        done = subprocess.run(
            [*cli_command(), "hook", "gemini"],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_install_gemini_keeps_the_settings_is_idempotent_and_uninstalls_only_its_own(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    theirs = {"type": "command", "command": "/usr/bin/other-tool", "timeout": 500}
    user = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooks": {"BeforeAgent": [{"hooks": [theirs]}]},
    }
    path.write_text(json.dumps(user))
    (result,) = installers.install("gemini")
    assert result.changed and any("GEMINI_CLI_TRUST_WORKSPACE" in note for note in result.notes)
    data = json.loads(path.read_text())
    assert data["security"] == user["security"]
    assert set(data["hooks"]) == set(GEMINI_EVENTS)
    for event in GEMINI_EVENTS:
        mine = [h for g in data["hooks"][event] for h in g["hooks"] if h["command"].endswith("hook gemini")]
        assert len(mine) == 1 and mine[0]["timeout"] == 10000  # milliseconds, as Gemini reads it
        assert Path(shlex.split(mine[0]["command"])[0]).is_absolute()
    assert "GEMINI_CLI_TRUST_WORKSPACE" not in path.read_text()  # trust is the user's to give
    before = path.read_text()
    (again,) = installers.install("gemini")
    assert not again.changed and path.read_text() == before
    (removed,) = installers.uninstall("gemini")
    assert removed.changed
    assert json.loads(path.read_text()) == user
    (none,) = installers.uninstall("gemini")
    assert not none.changed


def test_install_gemini_honours_gemini_cli_home_and_refuses_broken_json(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    (result,) = installers.install("gemini")
    assert result.path == tmp_path / "elsewhere" / ".gemini" / "settings.json" and result.path.is_file()
    result.path.write_text("{not json")
    with pytest.raises(install.InstallError, match="not valid JSON"):
        installers.install("gemini")
    assert result.path.read_text() == "{not json"


def test_the_sample_chat_counts_as_the_reference_counter_reads_it() -> None:
    import sidelight
    from tests.support.reference import normalize, reference_scan

    sample = Path(__file__).parent / "data" / "gemini" / "four-tools-resume.jsonl"
    activity = sidelight.scan(sample)
    assert activity.format == sidelight.Format.GEMINI
    scanned, reference = normalize(activity.as_dict()), normalize(reference_scan(sample, "gemini"))
    assert {k: scanned[k] for k in reference} == reference
    # Two typed prompts; the <session_context> message and the digests in <hook_context> parts are none.
    assert activity.messages.user == 2 and "[Session Activity]" in sample.read_text()
    assert activity.messages.assistant == 7 and sum(activity.tools.values()) == 5


def test_sessions_show_a_resume_file_as_the_same_sessions_not_a_subagent(home: Path, tmp_path: Path) -> None:
    """`gemini --resume` in a later minute starts a second chat file for the same session: `sessions`
    says so, and counts its subagents apart (in the singular for one); `read` still gives the
    conversation, which goes on in the first file."""
    sample = Path(__file__).parent / "data" / "gemini" / "four-tools-resume.jsonl"
    session_id = json.loads(sample.read_text().splitlines()[0])["sessionId"]
    short = session_id[:8]
    folder = chats(home, "app")
    first = folder / f"session-2026-11-25T05-49-{short}.jsonl"
    first.write_bytes(sample.read_bytes())
    # What the resume leaves in its own minute's file: a header and Gemini's own context, no prompt.
    context = sample.read_text().splitlines()[1]
    (folder / f"session-2026-11-25T05-52-{short}.jsonl").write_text(header(session_id) + context + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(tmp_path / "state"), SIDELIGHT_SCOPE="all")

    def sessions(*args: str) -> str:
        done = subprocess.run(
            [*cli_command(), "sessions", *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert (done.returncode, done.stderr) == (0, "")
        return done.stdout

    row = next(line for line in sessions().splitlines() if short in line)
    assert row.endswith(f"{first.name} (+1 resumed file)"), row
    alone = sessions("--json").splitlines()
    assert len(alone) == 1
    record = json.loads(alone[0])
    assert (record["resumed"], record["subagents"], record["subagent_paths"]) == (1, 0, [])

    subagents = folder / session_id
    subagents.mkdir()
    (subagents / "helper.jsonl").write_text(header(session_id))
    row = next(line for line in sessions().splitlines() if short in line)
    assert row.endswith("(+1 resumed file, 1 subagent)"), row
    (subagents / "other.jsonl").write_text(header(session_id))
    row = next(line for line in sessions().splitlines() if short in line)
    assert row.endswith("(+1 resumed file, 2 subagents)"), row
    # The counts are the conversation's: the resume file's context is no message of its own.
    only_first = json.loads(sessions("--json"))
    first_alone = subprocess.run(
        [*cli_command(), "scan", "--json", str(first)], capture_output=True, text=True, env=env, timeout=60
    )
    assert only_first["user_messages"] == json.loads(first_alone.stdout)["messages"]["user"]

    # `read` gives the conversation, named by the session or by either of its own files.
    resumed = folder / f"session-2026-11-25T05-52-{short}.jsonl"
    shown = []
    for name in (short, str(first), str(resumed)):
        done = subprocess.run(
            [*cli_command(), "read", name, "--lines", "50"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "session_context" not in done.stdout and "alpha and gamma" in done.stdout, done.stdout
        shown.append(done.stdout)
    assert shown[0] == shown[1] == shown[2]
