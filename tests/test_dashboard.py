"""`sidelight dashboard` (issue 22), served to Starlette's TestClient: the token, Host and Origin checks,
escaping and redaction, the rows, collisions and timeline of a hand-made multi-agent state, the live
event stream, and the command itself (the missing extra, the URL line, SIGTERM)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from sidelight.config import Settings
from sidelight.dashboard.app import FORBIDDEN, TOKEN_HEADER, create_app
from sidelight.plugins import Plugins
from tests.conftest import cli_command
from tests.test_watch import iso, prompt_line, transcript

TOKEN = "t0ken-for-the-tests"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
KEY = "sk-ant-api03-" + "Q" * 40 + "-abcdEFGH"


def read_line(n: int, path: str, moment: float) -> str:
    block = {"type": "tool_use", "id": f"r{n}", "name": "Read", "input": {"file_path": path}}
    entry = {
        "type": "assistant",
        "message": {"id": f"rm{n}", "role": "assistant", "content": [block]},
        "timestamp": iso(moment),
        "cwd": "/tmp/proj",
    }
    return json.dumps(entry) + "\n"


def edit_line(n: int, path: str, moment: float) -> str:
    block = {
        "type": "tool_use",
        "id": f"e{n}",
        "name": "Edit",
        "input": {"file_path": path, "old_string": "a", "new_string": "b"},
    }
    entry = {
        "type": "assistant",
        "message": {"id": f"em{n}", "role": "assistant", "content": [block]},
        "timestamp": iso(moment),
        "cwd": "/tmp/proj",
    }
    return json.dumps(entry) + "\n"


def pi_session(home: Path, now: float) -> Path:
    """A live Pi session in another project that wrote /tmp/other/notes.md."""
    folder = home / ".pi" / "agent" / "sessions" / "--tmp-other--"
    folder.mkdir(parents=True)
    path = folder / "2026-01-01T10-00-00-000Z_0b5e3c2a-1111-4222-8333-944445555666.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "0b5e3c2a", "timestamp": iso(now - 300), "cwd": "/tmp/other"},
        {
            "type": "message",
            "id": "p1",
            "parentId": None,
            "timestamp": iso(now - 240),
            "message": {"role": "user", "content": [{"type": "text", "text": "write the notes"}]},
        },
        {
            "type": "message",
            "id": "p2",
            "parentId": "p1",
            "timestamp": iso(now - 200),
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "write",
                        "arguments": {"path": "/tmp/other/notes.md", "content": "x"},
                    }
                ],
                "stopReason": "toolUse",
            },
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def world(home: Path) -> dict[str, Any]:
    """Two live Claude Code sessions of /tmp/proj sharing shared.py (one edits it, one reads it), an
    ended one that edited it hours ago, a live Pi session elsewhere, one with hostile text."""
    now = time.time()
    alpha = transcript(home, "aaaa1111-0000-4000-8000-000000000001")
    alpha.write_text(
        prompt_line("refactor the shared module", now - 600) + edit_line(1, "/tmp/proj/shared.py", now - 500),
        encoding="utf-8",
    )
    beta = transcript(home, "bbbb2222-0000-4000-8000-000000000002")
    beta.write_text(
        prompt_line("review shared", now - 400) + read_line(2, "/tmp/proj/shared.py", now - 300),
        encoding="utf-8",
    )
    old = transcript(home, "cccc3333-0000-4000-8000-000000000003")
    old.write_text(
        prompt_line("old work", now - 5 * 3600) + edit_line(3, "/tmp/proj/shared.py", now - 5 * 3600 + 10),
        encoding="utf-8",
    )
    hostile = transcript(home, "dddd4444-0000-4000-8000-000000000004")
    hostile.write_text(
        prompt_line("<script>alert(1)</script> use " + KEY, now - 100)
        + edit_line(4, "/tmp/proj/<img src=x onerror=alert(2)>.py", now - 90),
        encoding="utf-8",
    )
    pi = pi_session(home, now)
    return {"home": home, "alpha": alpha, "beta": beta, "old": old, "hostile": hostile, "pi": pi, "now": now}


def make_client(home: Path, base: str = BASE, **kwargs: Any) -> TestClient:
    settings = Settings.load()
    app = create_app(
        settings.state_dir, TOKEN, port=PORT, settings=settings, plugins=Plugins(entry_points=False)
    )
    return TestClient(app, base_url=base, **kwargs)


@pytest.fixture
def client(world: dict[str, Any]) -> TestClient:
    """A client that loaded the page with the token once (so it has the cookie)."""
    client = make_client(world["home"])
    first = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    return client


def by_name(client: TestClient) -> dict[str, dict[str, Any]]:
    rows = client.get("/api/sessions").json()
    return {row["id"].split(":", 1)[1][:8]: row for row in rows}


# -- the guard -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/", "/api/sessions", "/api/collisions", "/api/timeline", "/events", "/static/dashboard.js"]
)
def test_every_request_needs_the_token(world, path):
    client = make_client(world["home"])
    for url in (path, f"{path}?token=wrong", f"{path}?token={TOKEN}x"):
        response = client.get(url)
        assert response.status_code == 403, url
        assert response.text == FORBIDDEN
    client.cookies.set("sidelight_dashboard_8765", "wrong")
    assert client.get(path).status_code == 403


def test_the_refusal_says_how_to_open_the_dashboard_and_nothing_of_it():
    assert FORBIDDEN.startswith("forbidden: ")
    assert "'sidelight dashboard'" in FORBIDDEN and "?token=" in FORBIDDEN
    assert TOKEN not in FORBIDDEN


def test_the_token_in_the_query_or_the_cookie_opens_the_api(world):
    client = make_client(world["home"])
    assert client.get(f"/api/sessions?token={TOKEN}").status_code == 200
    assert client.get("/api/sessions").status_code == 403  # an API call sets no cookie
    client.get(f"/?token={TOKEN}")
    assert client.get("/api/sessions").status_code == 200


def test_a_host_that_is_not_the_bound_address_is_refused(world):
    for base in ("http://evil.example:8765", "http://127.0.0.1:9999", "http://localhost.evil.example:8765"):
        client = make_client(world["home"], base=base)
        assert client.get(f"/api/sessions?token={TOKEN}").status_code == 403, base
    for base in ("http://localhost:8765", "http://[::1]:8765"):
        client = make_client(world["home"], base=base)
        assert client.get(f"/api/sessions?token={TOKEN}").status_code == 200, base


def test_a_foreign_origin_is_refused(client):
    assert client.get("/api/sessions", headers={"Origin": "http://evil.example"}).status_code == 403
    assert client.get("/api/sessions", headers={"Origin": "null"}).status_code == 403
    assert client.get("/api/sessions", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.get("/api/sessions", headers={"Origin": BASE}).status_code == 200


def test_an_action_needs_the_origin_and_the_csrf_header(client, world):
    key = next(r["id"] for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:aaaa"))
    url = f"/api/sessions/{key}/suspend"
    assert client.post(url).status_code == 403
    assert client.post(url, headers={"Origin": BASE}).status_code == 403
    assert client.post(url, headers={TOKEN_HEADER: TOKEN}).status_code == 403  # no Origin
    assert client.post(url, headers={"Origin": BASE, TOKEN_HEADER: "wrong"}).status_code == 403
    assert client.post(url, headers={"Origin": "http://evil.example", TOKEN_HEADER: TOKEN}).status_code == 403
    assert by_name(client)["aaaa1111"]["state"] == "active"  # nothing happened
    done = client.post(url, headers={"Origin": BASE, TOKEN_HEADER: TOKEN})
    assert done.status_code == 200
    assert done.json() == {"id": key, "action": "suspend", "applied_by_watcher": False}
    assert by_name(client)["aaaa1111"]["state"] == "suspended"
    resumed = client.post(f"/api/sessions/{key}/resume", headers={"Origin": BASE, TOKEN_HEADER: TOKEN})
    assert resumed.status_code == 200
    assert by_name(client)["aaaa1111"]["state"] == "active"


def test_recap_to_a_file_writes_it_in_the_state_directory(client, world):
    key = next(r["id"] for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:aaaa"))
    done = client.post(f"/api/sessions/{key}/recap", headers={"Origin": BASE, TOKEN_HEADER: TOKEN})
    assert done.status_code == 200, done.text
    written = Path(done.json()["written"])
    assert written.parent == world["home"] / "state" / "recaps"
    assert "refactor the shared module" in written.read_text(encoding="utf-8")
    assert written.stat().st_mode & 0o777 == 0o600


def test_an_unknown_session_is_404(client):
    assert client.get("/api/sessions/claude-code:nope-nope").status_code == 404
    assert client.get("/session/claude-code:nope-nope").status_code == 404
    headers = {"Origin": BASE, TOKEN_HEADER: TOKEN}
    assert client.post("/api/sessions/claude-code:nope-nope/suspend", headers=headers).status_code == 404


# -- what it shows ---------------------------------------------------------------------------------------


def test_transcript_text_is_escaped_and_redacted(client, world):
    key = next(r["id"] for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:dddd"))
    for page in (client.get("/").text, client.get(f"/session/{key}").text):
        assert "<script>alert(1)</script>" not in page
        assert "<img src=x" not in page
        assert KEY not in page
        assert "sk-ant-api03-QQQQ" not in page
    session_page = client.get(f"/session/{key}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in session_page
    assert "[REDACTED" in session_page
    for url in ("/api/sessions", f"/api/sessions/{key}", "/api/collisions", "/api/timeline"):
        assert KEY not in client.get(url).text, url


def test_rows_of_a_multi_agent_state(client, world):
    rows = client.get("/api/sessions").json()
    assert {r["agent"] for r in rows} == {"claude-code", "pi"}
    found = by_name(client)
    assert set(found) >= {"aaaa1111", "bbbb2222", "cccc3333", "dddd4444"}
    alpha = found["aaaa1111"]
    assert set(alpha) >= {
        "id", "name", "agent", "project", "state", "last_activity", "messages", "tools", "files", "hot_memory"
    }  # fmt: skip
    assert alpha["state"] == "active"
    assert alpha["messages"] == 2
    assert alpha["tools"] == {"edit": 1, "read": 0, "command": 0, "other": 0}
    assert alpha["files"] == ["/tmp/proj/shared.py"]
    assert alpha["last_file"] == "shared.py"  # its project is the cwd of its lines (written by json.dumps)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", alpha["last_activity"])
    assert found["cccc3333"]["state"] == "ended"
    pi = next(r for r in rows if r["agent"] == "pi")
    assert pi["state"] == "active"
    assert pi["tools"]["edit"] == 1
    assert pi["project"] != alpha["project"]
    page = client.get("/").text
    # One section per project, one row per session, the cells the browser tests look for.
    assert page.count('<section class="project"') == len({r["project"] for r in rows})
    for row in rows:
        assert f'data-session-id="{row["id"]}"' in page
    assert re.search(
        r'<tr data-session-id="claude-code:aaaa[^"]*" data-agent="claude-code" data-state="active"', page
    )
    for control in ('id="filter-agent"', 'id="filter-state"', 'id="filter-project"', 'id="timeline"'):
        assert control in page
    assert 'id="fleet"' not in page  # no Redis configured


def test_collisions_follow_the_digests_rule(client, world):
    collisions = client.get("/api/collisions").json()
    files = {c["file"]: c for c in collisions}
    # alpha changed shared.py and beta read it: both live. The ended session's old edit does not count,
    # the Pi session's notes.md and the hostile session's file are touched by one session each.
    assert set(files) == {"/tmp/proj/shared.py"}
    who = {s["id"].split(":", 1)[1][:8]: s for s in files["/tmp/proj/shared.py"]["sessions"]}
    assert set(who) == {"aaaa1111", "bbbb2222"}
    assert who["aaaa1111"]["changed"] is True
    assert who["bbbb2222"]["changed"] is False
    assert who["bbbb2222"]["when"] > who["aaaa1111"]["when"]  # read after it was edited
    page = client.get("/").text
    assert '<li data-file="/tmp/proj/shared.py" data-sessions="2">' in page


def test_two_sessions_that_only_read_a_file_do_not_collide(client, world):
    now = time.time()
    for path in (world["alpha"], world["beta"]):
        with path.open("a", encoding="utf-8") as file:
            file.write(read_line(9, "/tmp/proj/README.md", now - 5))
    files = {c["file"] for c in client.get("/api/collisions").json()}
    assert "/tmp/proj/README.md" not in files


def test_the_timeline_counts_per_minute_and_marks_lifecycle_changes(client, world, monkeypatch):
    timeline = client.get("/api/timeline").json()
    assert timeline["minutes"] == 180
    series = {s["id"].split(":", 1)[1][:8] if ":" in s["id"] else s["id"]: s for s in timeline["sessions"]}
    assert "cccc3333" not in series  # quiet for five hours: out of the window
    alpha = series["aaaa1111"]
    assert len(alpha["messages"]) == len(alpha["tools"]) == 180
    # As its row counts them: the prompt and the response that made the edit (a tool use too).
    assert sum(alpha["messages"]) == 2
    assert sum(alpha["tools"]) == 1
    start = timeline["start_epoch"]
    assert alpha["tools"][int((world["now"] - 500 - start) // 60)] == 1
    assert alpha["messages"][int((world["now"] - 600 - start) // 60)] == 1
    assert timeline["lifecycle"] == []  # no one idle yet, no event log
    # Without a watcher's event log, an idle session's change is judged from its last activity.
    idle = transcript(world["home"], "eeee5555-0000-4000-8000-000000000005")
    idle.write_text(prompt_line("quiet now", world["now"] - 45 * 60), encoding="utf-8")
    monkeypatch.setattr("sidelight.dashboard.data.RELIST_SECONDS", 0.0)  # a new transcript: listed now
    client.app.state.board.refresh()
    marks = client.get("/api/timeline").json()["lifecycle"]
    assert [(m["id"].split(":", 1)[1][:8], m["kind"]) for m in marks] == [("eeee5555", "idle")]


def test_the_session_page_shows_conversation_context_and_recap(client, world):
    key = next(r["id"] for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:bbbb"))
    detail = client.get(f"/api/sessions/{key}").json()
    assert [e["role"] for e in detail["conversation"]] == ["user", "tool"]
    assert detail["conversation"][0]["text"] == "review shared"
    assert detail["next_context"]["event"] == "prompt"
    # Its sibling alpha edited a file: the digest of its next prompt names it.
    assert "[Session Activity]" in (detail["next_context"]["text"] or "")
    assert "review shared" in detail["recap"]
    assert detail["last_injected"] is None
    with world["beta"].open("a", encoding="utf-8") as file:
        attachment = {
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": ["[Session Activity] (report)\n- x"],
            },
            "timestamp": iso(time.time()),
        }
        file.write(json.dumps(attachment) + "\n")
    detail = client.get(f"/api/sessions/{key}").json()
    assert detail["last_injected"].startswith("(Session Activity) (report)")
    page = client.get(f"/session/{key}").text
    for part in (
        'id="conversation"',
        'id="last-injected"',
        'id="next-context"',
        'id="recap"',
        'data-action="suspend"',
    ):
        assert part in page


# -- live ------------------------------------------------------------------------------------------------


def test_the_event_stream_sends_a_session_that_was_written(client, world):
    found = re.search(r'data-version="(\d+)"', client.get("/").text)
    assert found is not None
    version = int(found.group(1))
    got: list[str] = []
    failure: list[BaseException] = []

    def listen() -> None:
        try:
            with client.stream("GET", f"/events?since={version}") as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                event = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "sessions":
                        got.append(line[6:])
                        return
        except BaseException as error:  # reported by the test
            failure.append(error)

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    time.sleep(1.5)  # the stream is open and has looked once: nothing new
    assert not got, got
    with world["beta"].open("a", encoding="utf-8") as file:
        file.write(prompt_line("one more thing", time.time()))
    listener.join(20)
    assert not failure, failure
    assert got, "no sessions event after a transcript was appended"
    data = json.loads(got[0])
    assert data["version"] > version
    [row] = [r for r in data["rows"] if r["id"].startswith("claude-code:bbbb")]
    assert row["messages"] == 3


# -- the command -----------------------------------------------------------------------------------------


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"))
    return env


def test_the_command_without_the_extra_says_so_in_one_line(home):
    code = (
        "import sys; sys.modules['starlette'] = None\n"
        "from sidelight.cli import main\n"
        "sys.exit(main(['dashboard', '--no-browser']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=clean_env(home),
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "sidelight: the dashboard needs the extra: pip install '.[dashboard]'\n"


def test_the_command_prints_the_url_serves_and_ends_on_sigterm(world):
    process = subprocess.Popen(
        [*cli_command(), "dashboard", "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(world["home"]),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.fullmatch(r"sidelight dashboard: (http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))\n", line)
        assert match, line
        url, port = match.group(1), match.group(2)
        # The first load sets the cookie and redirects to the page without the token.
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as response:
            assert response.status == 200
            assert response.url == f"http://127.0.0.1:{port}/"
            assert b'data-page="overview"' in response.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions", timeout=30)
        assert refused.value.code == 403
        refused.value.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            rest, errors = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    code = process.returncode
    assert code == 0, errors
    assert rest == ""  # one line only
    assert errors == ""


def test_with_a_running_watcher_the_rows_are_its_snapshots(client, world):
    from sidelight.watch.watcher import Watcher, read_snapshot
    from tests.conftest import wait_for

    settings = Settings.load()
    board = client.app.state.board
    assert board.source == "transcripts"
    with Watcher(settings, Plugins(entry_points=False), debounce=0.02, flush_interval=0.0):
        wait_for(lambda: (read_snapshot(settings) or {}).get("sessions"), what="the snapshot")
        board.refresh()
        assert board.source == "watcher"
        assert board.watcher_pid == os.getpid()
        assert "from the running watcher" in client.get("/").text
        before = by_name(client)["bbbb2222"]["messages"]
        version = board.version
        with world["beta"].open("a", encoding="utf-8") as file:
            file.write(prompt_line("and now?", time.time()))

        def changed() -> list[dict[str, Any]]:
            board.refresh()
            return [r for r in board.changes_since(version)[1] if r["id"].startswith("claude-code:bbbb")]

        [row] = wait_for(changed, what="the watcher's new snapshot in the board")
        assert row["messages"] == before + 1
        assert row["files"] == []  # beta only read shared.py
        assert by_name(client)["aaaa1111"]["files"] == ["/tmp/proj/shared.py"]  # the watcher's recent_files


# -- at scale --------------------------------------------------------------------------------------------


def test_the_overview_shows_the_newest_collisions_and_links_to_the_rest(client, world):
    from sidelight.dashboard.data import COLLISIONS_SHOWN

    now = time.time()
    extra = COLLISIONS_SHOWN + 7
    # alpha edits extra more files, beta reads each a little later: one collision per file, the last newest.
    with (
        world["alpha"].open("a", encoding="utf-8") as edits,
        world["beta"].open("a", encoding="utf-8") as reads,
    ):
        for n in range(extra):
            edits.write(edit_line(100 + n, f"/tmp/proj/many/f{n:03d}.py", now - 200 + n))
            reads.write(read_line(100 + n, f"/tmp/proj/many/f{n:03d}.py", now - 199 + n))
    everything = client.get("/api/collisions").json()
    assert len(everything) == extra + 1  # and shared.py
    assert [c["file"] for c in everything[:2]] == [
        f"/tmp/proj/many/f{extra - 1:03d}.py",
        f"/tmp/proj/many/f{extra - 2:03d}.py",
    ]
    page = client.get("/").text
    shown = re.findall(r'<li data-file="([^"]+)"', page)
    assert shown == [c["file"] for c in everything[:COLLISIONS_SHOWN]]
    assert re.search(
        r'<p id="collisions-more"><a href="/collisions">and <span id="collisions-more-count">8</span> more',
        page,
    )
    full = client.get("/collisions").text
    assert re.findall(r'<li data-file="([^"]+)"', full) == [c["file"] for c in everything]
    assert 'data-page="collisions"' in full
    assert client.get("/collisions", headers={"Host": "evil.example:8765"}).status_code == 403


def test_a_file_many_sessions_share_names_the_latest_ten(client, world):
    from sidelight.dashboard.data import COLLISION_SESSIONS_SHOWN
    from tests.test_watch import transcript as make_transcript

    now = time.time()
    for n in range(COLLISION_SESSIONS_SHOWN + 2):
        path = make_transcript(world["home"], f"ffff{n:04d}-0000-4000-8000-000000000000")
        path.write_text(
            prompt_line("look", now - 60) + read_line(n, "/tmp/proj/shared.py", now - 50 + n),
            encoding="utf-8",
        )
    client.app.state.board._listed_at = float("-inf")  # the new transcripts: listed now
    client.app.state.board.refresh()
    page = client.get("/").text
    item = re.search(r'<li data-file="/tmp/proj/shared.py" data-sessions="(\d+)">(.*?)</li>', page, re.S)
    assert item is not None
    assert int(item.group(1)) == COLLISION_SESSIONS_SHOWN + 4  # those twelve, alpha and beta
    assert item.group(2).count('class="who"') == COLLISION_SESSIONS_SHOWN
    assert "and 4 more sessions" in item.group(2)


def test_an_idle_board_only_stats_until_a_file_changes_or_a_state_is_due(world, monkeypatch):
    from sidelight.dashboard import data

    clock = [time.time()]
    board = data.Board(Settings.load(), Plugins(entry_points=False), clock=lambda: clock[0])
    board.rows()
    reads: list[int] = []
    real = data.transcript_rows  # type: ignore[attr-defined]

    def counted(sessions, *args, **kwargs):
        reads.append(len(sessions))
        return real(sessions, *args, **kwargs)

    monkeypatch.setattr(data, "transcript_rows", counted)
    monkeypatch.setattr(data, "REFRESH_SECONDS", 0.0)
    monkeypatch.setattr(data, "STAT_SECONDS", 0.0, raising=False)
    refreshes: list[int] = []
    real_refresh = board.refresh

    def refresh() -> data.Changes:
        refreshes.append(1)
        return real_refresh()

    monkeypatch.setattr(board, "refresh", refresh)
    for _ in range(5):
        board.refresh_soon()
    clock[0] += data.RELIST_SECONDS + 1  # the list is taken again: the same sessions
    board.refresh_soon()
    assert refreshes == []  # nothing was written: six looks, no refresh
    with world["beta"].open("a", encoding="utf-8") as file:
        file.write(prompt_line("one more", clock[0]))
    board.refresh_soon()
    assert refreshes == [1]
    assert reads == [1]  # the one transcript that changed
    assert by_key(board)["bbbb2222"]["messages"] == 3
    # No write, but alpha's idle timeout passes: the look refreshes, and alpha turns idle.
    clock[0] = world["now"] - 500 + board.idle_timeout + 1
    board.refresh_soon()
    assert len(refreshes) == 2
    assert by_key(board)["aaaa1111"]["state"] == "idle"
    # A new session: the next list has it.
    transcript(world["home"], "eeee5555-0000-4000-8000-000000000005").write_text(
        prompt_line("new here", clock[0]), encoding="utf-8"
    )
    clock[0] += data.RELIST_SECONDS + 1
    board.refresh_soon()
    assert len(refreshes) == 3
    assert by_key(board)["eeee5555"]["state"] == "active"


def by_key(board: Any) -> dict[str, dict[str, Any]]:
    return {row["id"].split(":", 1)[1][:8]: row for row in board.rows()}


# -- without the script ----------------------------------------------------------------------------------


def rows_in_order(page: str) -> list[tuple[str, bool]]:
    """The overview's rows: each session's 8-character id and whether it is hidden, in page order."""
    return [
        (match.group(1)[:8], match.group(2) is not None)
        for match in re.finditer(r'<tr data-session-id="[\w-]+:([\w-]+)"[^>]*?( hidden)?>', page)
    ]


def test_the_overview_sorts_filters_and_searches_without_the_script(client, world):
    page = client.get("/").text
    for header in ("agent", "name", "state", "files", "hot memory"):
        assert f'<th scope="col">{header}</th>' in page
    for key in ("last", "messages", "tools"):
        assert re.search(rf'<th scope="col" data-sort="{key}"><a href="/\?sort={key}"', page), key
    assert re.search(r'<td class="state"><span class="badge">active</span></td>', page)
    assert 'action="/"' in page and 'method="get"' in page
    with world["beta"].open("a", encoding="utf-8") as file:  # beta: 5 messages, the most in /tmp/proj
        file.write(
            prompt_line("one", time.time())
            + prompt_line("two", time.time())
            + prompt_line("three", time.time())
        )
    client.app.state.board.refresh()
    by_messages = [key for key, _ in rows_in_order(client.get("/?sort=messages").text)]
    assert by_messages.index("bbbb2222") < by_messages.index("aaaa1111") < by_messages.index("cccc3333")
    sorted_page = client.get("/?sort=messages&agent=claude-code").text
    assert '<th scope="col" data-sort="messages" aria-sort="descending">' in sorted_page
    # The other sort links keep the filter.
    assert 'href="/?agent=claude-code&amp;sort=tools"' in sorted_page
    hidden = dict(rows_in_order(sorted_page))
    assert hidden["bbbb2222"] is False
    assert next(v for k, v in hidden.items() if k not in ("aaaa1111", "bbbb2222", "cccc3333", "dddd4444"))
    assert '<option value="claude-code" selected>' in sorted_page
    searched = client.get("/?q=BBBB22").text  # the name (here the session id's start), any case
    assert [k for k, h in rows_in_order(searched) if not h] == ["bbbb2222"]
    assert 'value="BBBB22"' in searched
    assert '<span id="shown-count" role="status">1 shown</span>' in searched
    # The Pi project's section has no row left: hidden as a whole.
    assert re.search(r'<section class="project" data-project="[^"]*other[^"]*" hidden>', searched)
    assert [k for k, h in rows_in_order(client.get("/?q=tmp/OTHER").text) if not h] == ["0b5e3c2a"]  # project
    assert client.get("/?sort=<script>").status_code == 200  # an unknown sort is the status order


def test_the_timeline_counts_a_message_written_over_several_lines_once(client, world):
    """Claude Code writes a response block by block, each line with the same message id: one message, as
    ``sidelight status`` counts it, in the minute it began, even when its last block comes a minute
    later; its two tool uses count one each."""
    now = time.time()
    began = now - 200

    def block(content: dict[str, Any], moment: float) -> str:
        entry = {
            "type": "assistant",
            "message": {"id": "split-1", "role": "assistant", "content": [content]},
            "timestamp": iso(moment),
            "cwd": "/tmp/proj",
        }
        return json.dumps(entry) + "\n"

    path = transcript(world["home"], "9999aaaa-0000-4000-8000-000000000009")
    path.write_text(
        prompt_line("build it", began - 10)
        + block({"type": "thinking", "thinking": "hmm"}, began)
        + block({"type": "text", "text": "Building."}, began + 1)
        + block({"type": "text", "text": "Still building."}, began + 2)
        + block({"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "make"}}, began + 3)
        + block({"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "/x"}}, began + 70),
        encoding="utf-8",
    )
    board = client.app.state.board
    board._listed_at = float("-inf")  # the new transcript: listed now
    board.refresh()
    row = next(r for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:9999"))
    timeline = client.get("/api/timeline").json()
    series = next(s for s in timeline["sessions"] if s["id"] == row["id"])
    assert sum(series["messages"]) == row["messages"] == 2
    assert sum(series["tools"]) == sum(row["tools"].values()) == 2
    start = timeline["start_epoch"]
    assert series["messages"][int((began - start) // 60)] >= 1
    assert series["partial"] is False
    assert not list((world["home"] / "state" / "dashboard").glob("*"))  # the scratch copy is gone


def test_the_last_injected_context_is_read_where_the_host_records_it(client, world):
    """A digest a person pasted into a prompt is no injection: the page shows the one the host recorded
    as a hook's context (Claude Code's attachment), says where and when; the real Gemini CLI and opencode
    transcripts give theirs from their own places."""
    from sidelight.dashboard.data import last_injected

    now = time.time()
    attachment = {
        "type": "attachment",
        "attachment": {
            "type": "hook_additional_context",
            "content": ["[Session Activity] (report)\n- the real one"],
        },
        "timestamp": iso(now - 60),
    }
    with world["beta"].open("a", encoding="utf-8") as file:
        file.write(json.dumps(attachment) + "\n")
        file.write(
            prompt_line("what does this mean? [Session Activity] (report)\n- pasted by the person", now - 30)
        )
    key = next(r["id"] for r in client.get("/api/sessions").json() if r["id"].startswith("claude-code:bbbb"))
    detail = client.get(f"/api/sessions/{key}").json()
    assert detail["last_injected"] == "(Session Activity) (report)\n- the real one"
    assert detail["last_injected_where"] == "Claude Code's hook attachment (hook_additional_context)"
    assert detail["last_injected_time"] == iso(now - 60).split(".")[0].removesuffix("Z") + "Z"
    page = client.get(f"/session/{key}").text
    assert re.search(
        r'id="last-injected-source">Recorded by the host in Claude Code&#39;s hook attachment', page
    )
    data = Path(__file__).parent / "data"
    gemini = last_injected(data / "gemini" / "four-tools-resume.jsonl", "gemini")
    assert gemini is not None
    assert gemini["where"] == "Gemini CLI's <hook_context> part of the prompt"
    assert gemini["text"].startswith("(Session Activity)")
    assert "</hook_context>" not in gemini["text"]
    opencode = last_injected(data / "opencode" / "four-tools-continue.jsonl", "opencode")
    assert opencode is not None
    assert (opencode["where"], opencode["time"]) == (
        "opencode's synthetic text part or a tool's output",
        "2026-11-25T05:48:02Z",
    )


@pytest.mark.parametrize(
    ("agent", "sample"),
    [
        ("claude-code", "four-tools-resume"),
        ("codex", "four-tools-resume"),
        ("pi", "four-tools-continue"),
        ("gemini", "four-tools-resume"),
        ("qwen", "four-tools-resume"),
        ("copilot", "four-tools-resume"),
        ("opencode", "four-tools-continue"),
        ("droid", "four-tools-resume"),
        ("kimi", "four-tools-resume"),
    ],
)
def test_the_timeline_of_a_real_transcript_adds_up_to_its_counts(home, agent, sample):
    """The transcripts the real CLIs wrote: their minutes add up to what one scan of the whole file
    counts (what ``sidelight status`` shows), for every agent."""
    from sidelight.dashboard.data import minute_counts
    from sidelight.engine.reads import TranscriptRead, scan_reads
    from sidelight.plugins import get_plugins
    from sidelight.records import Session
    from sidelight.timestamps import epoch_seconds

    path = Path(__file__).parent / "data" / agent / f"{sample}.jsonl"
    session = Session(key=f"{agent}:x", name="x", format=agent, path=path, group="", id="x", resolver=agent)
    plugins = get_plugins()
    [whole] = scan_reads([TranscriptRead(session, path, None, first_look=False)], plugins)
    assert not isinstance(whole, Exception)
    first = epoch_seconds(whole.first_timestamp)
    assert first is not None
    start = int(first // 60) * 60 - 60
    counts = minute_counts(session, path, plugins, start, 24 * 60, Settings.load())
    assert sum(counts["messages"]) == whole.messages.total > 0
    assert sum(counts["tools"]) == sum(whole.categories.values()) > 0


def test_a_file_of_the_row_s_project_is_shown_from_the_project():
    from sidelight.dashboard.data import shown_file

    assert shown_file("/w/app/src/a.py", "/w/app") == "src/a.py"
    assert shown_file("/w/app/src/a.py", "/w/app/") == "src/a.py"
    assert shown_file("/w/application/a.py", "/w/app") == "/w/application/a.py"  # not a prefix of names
    assert shown_file("/etc/hosts", "") == "/etc/hosts"


# -- collisions across the worktrees of one repository -------------------------------------------------------


def claude_in(home: Path, session_id: str, cwd: Path, lines: list[dict[str, Any]]) -> Path:
    """A Claude Code transcript of a session working in ``cwd``: a prompt, then ``lines`` (tool uses)."""
    path = transcript(home, session_id, str(cwd).replace("/", "-"))
    now = time.time()
    entries = [
        {"type": "user", "message": {"role": "user", "content": "work"}, "timestamp": iso(now - 60)},
        *(
            {
                "type": "assistant",
                "message": {"id": f"m{n}", "role": "assistant", "content": [block]},
                "timestamp": iso(now - 50 + n),
            }
            for n, block in enumerate(lines)
        ),
    ]
    path.write_text("".join(json.dumps({**e, "cwd": str(cwd)}) + "\n" for e in entries), encoding="utf-8")
    return path


def tool_use(name: str, path: str, n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{n}", "name": name, "input": {"file_path": path}}


@pytest.fixture
def worktrees(home: Path, tmp_path: Path) -> dict[str, Any]:
    """A repository whose main checkout's session edits ``app.py``, a session in its linked worktree
    (branch ``feature-x``) edits its own ``app.py`` (a relative path), and a session in the main
    checkout's ``sub/`` reads ``x.txt`` there, which the linked worktree's session also edits."""
    from sidelight.engine import repos
    from tests.test_repository_scope import two_worktrees

    repos.forget()
    main, linked = tmp_path / "repo", tmp_path / "wt-feature"
    two_worktrees(main, linked)
    main, linked = main.resolve(), linked.resolve()
    claude_in(home, "aaaa1111-0000-4000-8000-00000000000a", main, [tool_use("Edit", f"{main}/app.py", 1)])
    claude_in(
        home,
        "bbbb2222-0000-4000-8000-00000000000b",
        linked,
        [tool_use("Edit", "app.py", 1), tool_use("Edit", "sub/x.txt", 2)],
    )
    claude_in(home, "cccc3333-0000-4000-8000-00000000000c", main / "sub", [tool_use("Read", "x.txt", 1)])
    return {"home": home, "main": main, "linked": linked}


def worktree_client(home: Path) -> TestClient:
    client = make_client(home)
    assert client.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    return client


def test_the_same_file_in_two_worktrees_is_one_collision_naming_each_worktree(worktrees):
    main = worktrees["main"]
    collisions = worktree_client(worktrees["home"]).get("/api/collisions").json()
    files = {c["file"]: c for c in collisions}
    assert set(files) == {f"{main}/app.py", f"{main}/sub/x.txt"}, collisions
    app = files[f"{main}/app.py"]
    assert app["worktrees"] == 2
    who = {s["id"].split(":", 1)[1][:4]: s for s in app["sessions"]}
    assert {k: (s["worktree"], s["changed"]) for k, s in who.items()} == {
        "aaaa": ("main", True),
        "bbbb": ("feature-x", True),
    }
    assert who["bbbb"]["path"] == f"{worktrees['linked']}/app.py"
    # The subfolder's session reads sub/x.txt as x.txt: the same file as the linked worktree's sub/x.txt.
    x = {s["id"].split(":", 1)[1][:4]: s["worktree"] for s in files[f"{main}/sub/x.txt"]["sessions"]}
    assert x == {"bbbb": "feature-x", "cccc": "main"}
    page = worktree_client(worktrees["home"]).get("/collisions").text
    assert f'<li data-file="{main}/app.py" data-sessions="2">' in page
    assert 'changed in worktree <span class="worktree">feature-x</span>' in page
    assert 'changed in worktree <span class="worktree">main</span>' in page


def test_scope_directory_compares_the_worktrees_paths_as_they_are(worktrees, monkeypatch):
    monkeypatch.setenv("SIDELIGHT_SCOPE", "directory")
    collisions = worktree_client(worktrees["home"]).get("/api/collisions").json()
    assert collisions == [], collisions
