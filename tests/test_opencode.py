"""opencode: the read-only export of its SQLite database, the ``opencode`` format's counts, the hook's
protocol and ``sidelight install opencode``.

The database is rebuilt from ``tests/data/opencode/opencode.sql`` (the real opencode's tables after
``tests/e2e/make_sample_data.py``); its export must be the sample export byte for byte, and its counts
what ``tests.support.reference.opencode_counts`` reads from the database itself.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sidelight
from sidelight import install
from sidelight.agents import opencode
from sidelight.config import Settings
from sidelight.plugins import Plugins
from tests.support import installers
from tests.support.reference import opencode_counts

DATA = Path(__file__).parent / "data" / "opencode"
SAMPLE = DATA / "four-tools-continue.jsonl"
SESSION = json.loads(SAMPLE.read_text().splitlines()[0])["id"]


def make_database(home: Path, *, wal: bool = True) -> Path:
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as connection:
        if wal:
            connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript((DATA / "opencode.sql").read_text())
    return db


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(tmp_path / "state")}
    return Settings.load(env=env, home=home)


def export_file(settings: Settings) -> Path:
    return Path(opencode.export_dir(settings)) / f"{SESSION}.jsonl"


def test_the_export_of_the_real_database_is_the_sample(settings: Settings) -> None:
    make_database(settings.home)
    sessions = opencode.export(settings)
    assert set(sessions) == {SESSION}
    assert sessions[SESSION]["directory"] == "/tmp/sidelight-samples/opencode/project"
    # The sample was exported prompt by prompt (a session line before opencode titled it, and one
    # after); exported at once, the session line holds the title and the messages are the same bytes.
    exported = export_file(settings).read_text().splitlines()
    sample = SAMPLE.read_text().splitlines()
    assert json.loads(exported[0]) == {**json.loads(sample[0]), "title": "ok"}
    assert exported[1:] == [line for line in sample if json.loads(line)["type"] == "message"]
    # Nothing changed in the database: the next listing does not open it, and appends nothing.
    before = export_file(settings).stat()
    (session,) = opencode.list_sessions(settings)
    assert export_file(settings).stat().st_mtime_ns == before.st_mtime_ns
    assert (session.key, session.name, session.format) == (f"opencode:{SESSION}", "ok", "opencode")
    assert session.group == str(Path("/tmp/sidelight-samples/opencode/project").resolve())


def test_the_format_counts_what_the_database_holds(settings: Settings) -> None:
    db = make_database(settings.home)
    expected = opencode_counts(db, SESSION)
    Plugins(entry_points=False).formats()  # registers the built-in Python decoder
    activity = sidelight.scan(SAMPLE, format="opencode")
    assert expected["synthetic"] == 1  # the digest the second prompt got: stored, never counted
    assert activity.messages.user == expected["user"] == 2
    assert activity.messages.assistant == expected["assistant"]
    assert dict(activity.tools) == expected["tools"] == {"bash": 2, "write": 1, "edit": 1, "read": 1}
    assert (activity.categories.command, activity.categories.edit, activity.categories.read) == (2, 2, 1)
    assert list(activity.files_touched) == expected["files"]
    assert activity.first_user_text is not None and activity.first_user_text.startswith("Create notes.txt")
    assert activity.last_user_text == "What does notes.txt say now?"
    assert activity.last_assistant_text == "It says alpha and gamma."
    assert activity.title == "ok" and activity.session_id == SESSION
    assert next(u.primary_arg for u in activity.tool_uses if u.category == "command") == "ls -la"


def _add_message(
    db: Path, mid: str, role: str, created: int, *, completed: bool = True, text: str = ""
) -> None:
    info: dict[str, object] = {"role": role, "time": {"created": created}}
    if role == "assistant" and completed:
        info["time"] = {"created": created, "completed": created + 5}
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, SESSION, created, created, json.dumps(info))
        )
        if text:
            part = {"type": "text", "text": text}
            connection.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                ("prt_" + mid[4:], mid, SESSION, created, created, json.dumps(part)),
            )
        connection.execute("UPDATE session SET time_updated = ? WHERE id = ?", (created + 10, SESSION))


def test_the_export_appends_only_settled_messages(settings: Settings) -> None:
    db = make_database(settings.home)
    opencode.export(settings)
    size = export_file(settings).stat().st_size
    late = int(time.time() * 1000)  # now: a reply still being written is recent, not stale
    _add_message(db, "msg_zz1", "user", late, text="third prompt")
    _add_message(db, "msg_zz2", "assistant", late + 100, completed=False, text="working")
    opencode.export(settings)
    added = export_file(settings).read_bytes()[size:].decode().splitlines()
    # The prompt is settled (a message came after it); the reply still being written waits.
    assert [json.loads(line)["id"] for line in added] == ["msg_zz1"]
    with sqlite3.connect(db) as connection:
        info = {"role": "assistant", "time": {"created": late + 100, "completed": late + 200}}
        connection.execute("UPDATE message SET data = ? WHERE id = 'msg_zz2'", (json.dumps(info),))
    opencode.export(settings)
    lines = export_file(settings).read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines[-2:]] == ["msg_zz1", "msg_zz2"]
    assert len(lines) == len(SAMPLE.read_text().splitlines()) - 1 + 2  # each once (one session line)


def test_a_locked_database_skips_the_export_and_keeps_what_was_exported(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    db = make_database(settings.home, wal=False)  # a rollback journal: a writer's lock blocks readers
    opencode.export(settings)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE session SET title = 'renamed'")
        os.utime(db, ns=(1, 1))  # the file looks changed: the export opens it
        with caplog.at_level("WARNING", logger="sidelight.agents.opencode"):
            sessions = opencode.export(settings)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert set(sessions) == {SESSION} and sessions[SESSION]["title"] == "ok"
    assert "opencode: skipped reading" in caplog.text and "locked" in caplog.text
    assert "renamed" not in export_file(settings).read_text()


def test_without_a_database_sqlite3_is_never_imported(settings: Settings) -> None:
    code = (
        "import sys\n"
        "from sidelight.config import Settings\n"
        "from sidelight.agents import opencode\n"
        "assert list(opencode.list_sessions(Settings.load())) == []\n"
        "print('sqlite3' in sys.modules, 'sidelight._declared' in sys.modules)\n"
    )
    env = {
        "HOME": str(settings.home),
        "SIDELIGHT_STATE_DIR": str(settings.state_dir),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_the_hook_reads_the_plugin_events() -> None:
    event = opencode.read_event(
        {"event": "chat.message", "session_id": "ses_1", "message_id": "msg_1", "cwd": "/p", "prompt": "hi"}
    )
    assert event is not None
    assert (event.host, event.event, event.session_id, event.prompt) == (
        "opencode",
        "UserPromptSubmit",
        "ses_1",
        "hi",
    )
    assert opencode.read_event({"event": "session.created", "session_id": "ses_1"}).event == "SessionStart"  # type: ignore[union-attr]
    assert opencode.read_event({"event": "session.idle", "session_id": "ses_1"}) is None
    assert opencode.read_event(["not", "a", "mapping"]) is None  # type: ignore[arg-type]
    assert opencode.render(event, "text") == "text" and opencode.render(event, None) is None


def test_the_hook_command_never_breaks_opencode(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for stdin in (b"not json", b'{"event": "chat.message", "session_id": "../../x"}'):
        done = subprocess.run(
            [sys.executable, "-m", "sidelight", "hook", "opencode"], input=stdin, env=env, capture_output=True
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_install_is_idempotent_and_keeps_other_plugins(tmp_path: Path) -> None:
    folder = tmp_path / ".config" / "opencode" / "plugin"
    folder.mkdir(parents=True)
    (folder / "mine.ts").write_text("export const Mine = async () => ({})\n")
    first = installers.install("opencode", home=tmp_path)[0]
    again = installers.install("opencode", home=tmp_path)[0]
    assert first.changed and not again.changed and first.path == folder / "sidelight.ts"
    text = first.path.read_text()
    assert "sidelight-opencode-plugin" in text
    assert f"const INSTALLED_COMMAND: string[] = {json.dumps(install.sidelight_command())};" in text
    assert Path(install.sidelight_command()[0]).is_absolute()
    removed = installers.uninstall("opencode", home=tmp_path)[0]
    assert removed.changed and not first.path.exists() and (folder / "mine.ts").exists()
    assert not installers.uninstall("opencode", home=tmp_path)[0].changed


def test_install_for_a_project_and_never_removing_a_foreign_file(tmp_path: Path) -> None:
    result = installers.install("opencode", scope="project", cwd=tmp_path)[0]
    assert result.path == tmp_path / ".opencode" / "plugin" / "sidelight.ts"
    result.path.write_text("// someone else's\n")
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        installers.uninstall("opencode", scope="project", cwd=tmp_path)
    assert result.path.exists()


def _add_session(db: Path, sid: str, title: str) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TEMP TABLE copied AS SELECT * FROM session WHERE id = ?", (SESSION,))
        connection.execute("UPDATE copied SET id = ?, title = ?", (sid, title))
        connection.execute("INSERT INTO session SELECT * FROM copied")


@pytest.mark.parametrize("modify_events", [True, False], ids=["file-events", "stat-pass"])
def test_a_running_watcher_follows_the_database_without_a_hook(
    home: Path, monkeypatch: pytest.MonkeyPatch, modify_events: bool
) -> None:
    from sidelight.watch.watcher import Watcher, read_snapshot
    from tests.conftest import wait_for

    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    settings = Settings.load()
    db = make_database(home)

    def rows() -> dict[str, dict[str, object]]:
        snapshot = read_snapshot(settings) or {}
        return {row["key"]: row for row in snapshot.get("sessions") or ()}

    key = f"opencode:{SESSION}"
    # No reconcile while the test runs: only the database's changes can bring the export up to date.
    with Watcher(
        settings,
        Plugins(entry_points=False),
        debounce=0.02,
        reconcile_interval=3600.0,
        flush_interval=0.0,
        modify_events=modify_events,
    ):
        first = wait_for(lambda: rows().get(key), what="the first export")["lines"]
        late = int(time.time() * 1000)  # now: a reply still being written is recent, not stale
        _add_message(db, "msg_zz1", "user", late, text="third prompt")
        _add_message(db, "msg_zz2", "assistant", late + 100, text="done")
        wait_for(lambda: rows()[key]["lines"] == first + 2, what="the messages added to the database")
        _add_session(db, "ses_zzzzzzzzzzzzNewSession", "a second one")
        row = wait_for(lambda: rows().get("opencode:ses_zzzzzzzzzzzzNewSession"), what="the new session")
        assert row["name"] == "a second one"
