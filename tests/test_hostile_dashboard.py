"""Issue 29, items 7-9: the dashboard worn out by a local user, a FIFO that held a hook or a page, and the
dashboard opening any path it was given.

7. Half-sent requests are closed after a few seconds, connections are capped (the one that waited
   longest for its head makes room), running out of descriptors is a 503 (not a 404) said once in the
   log, and a request past its deadline is a 503.
8. Transcripts, titles and heads are opened non-blocking and only as regular files (Python and the
   core): a FIFO named as a hook's transcript no longer holds the hook.
9. A session is only ever one of the dashboard's rows: any other path is the same 404 whether it exists
   or not.

Whatever could hang runs in a subprocess or a thread with a timeout, so that a regression fails instead
of hanging the suite.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sidelight.config import Settings
from sidelight.dashboard.app import TOKEN_HEADER, create_app
from sidelight.dashboard.data import HEAD_SECONDS
from sidelight.plugins import Plugins
from tests.conftest import cli_command
from tests.support.hook_world import HookWorld, session_id
from tests.test_watch import prompt_line, transcript

if TYPE_CHECKING:
    from collections.abc import Iterator

    from starlette.testclient import TestClient

TOKEN = "t0ken-for-the-tests"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
ALPHA = "aaaa1111-0000-4000-8000-000000000001"


def _clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), **extra)
    return env


@pytest.fixture
def alpha(home: Path) -> Path:
    """One live Claude Code session."""
    path = transcript(home, ALPHA)
    path.write_text(prompt_line("refactor the shared module", time.time() - 60), encoding="utf-8")
    return path


@pytest.fixture
def client(alpha: Path) -> Iterator[TestClient]:
    from starlette.testclient import TestClient

    settings = Settings.load()
    app = create_app(
        settings.state_dir, TOKEN, port=PORT, settings=settings, plugins=Plugins(entry_points=False)
    )
    with TestClient(app, base_url=BASE) as client:
        client.get(f"/?token={TOKEN}")  # the cookie
        yield client


# -- 9: only the listed sessions -------------------------------------------------------------------------


def test_a_path_that_is_no_listed_session_is_the_same_404_as_nothing(client, home, tmp_path, alpha):
    """An existing JSONL outside every agent's folder, a listed session's own transcript named by its
    path, a FIFO and a path that does not exist: all the same 404, nothing read or rendered."""
    other = tmp_path / "elsewhere.jsonl"
    other.write_text(prompt_line("a secret plan from another folder"), encoding="utf-8")
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    key = next(r["id"] for r in client.get("/api/sessions").json())
    assert client.get(f"/api/sessions/{key}").status_code == 200  # a row's id still opens its page
    headers = {"Origin": BASE, TOKEN_HEADER: TOKEN}
    answers: dict[tuple[str, str], set[str]] = {}
    for name in (str(other), str(alpha), str(fifo), str(tmp_path / "missing.jsonl"), "/etc/passwd"):
        for method, route in (
            ("GET", "/session/{}"),
            ("GET", "/api/sessions/{}"),
            ("POST", "/api/sessions/{}/recap"),
            ("POST", "/api/sessions/{}/suspend"),
        ):
            url = route.format(name)
            response = client.request(method, url, headers=headers if method == "POST" else None)
            assert response.status_code == 404, (url, response.text)
            assert "secret plan" not in response.text
            answers.setdefault((method, route), set()).add(response.text)
    # One answer per route, whatever the path named: nothing tells an existing file from none.
    assert all(len(texts) == 1 for texts in answers.values()), answers
    assert not (home / "state" / "recaps").exists() or not any((home / "state" / "recaps").iterdir())


# -- 7: exhaustion ----------------------------------------------------------------------------------------


def _start_dashboard(home: Path, open_files: int | None = None) -> tuple[subprocess.Popen[str], str, int]:
    """``sidelight dashboard`` in a process (with at most ``open_files`` descriptors); its URL and port."""

    def limit() -> None:
        if open_files is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, hard))

    process = subprocess.Popen(
        [*cli_command(), "dashboard", "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_clean_env(home),
        preexec_fn=limit,  # only setrlimit, in the child
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.fullmatch(r"sidelight dashboard: (http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))\n", line)
    assert match, line
    return process, match.group(1), int(match.group(2))


def _stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    try:
        _, errors = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return errors


def _half_sent(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    return sock


def test_a_half_sent_request_head_is_closed_after_a_few_seconds(home, alpha):
    process, _, port = _start_dashboard(home)
    try:
        with _half_sent(port) as sock:
            sock.settimeout(60)  # without a head timeout: never answered, never closed
            received = b""
            while chunk := sock.recv(4096):
                received += chunk
        assert received.startswith(b"HTTP/1.1 408"), received
    finally:
        errors = _stop(process)
    assert errors == ""


def test_a_flood_of_half_sent_requests_leaves_the_pages_answering(home, alpha):
    """The attack of the issue, scaled to a process allowed 128 descriptors: 600 half-sent requests
    (each a descriptor held without a cap or a timeout). The session page still answers 200, and
    stderr holds no traceback."""
    process, url, port = _start_dashboard(home, open_files=128)
    flood: list[socket.socket] = []
    try:
        for _ in range(600):
            try:
                flood.append(_half_sent(port))
            except OSError:  # refused or reset: the server made room
                continue
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as response:
            assert response.status == 200
        rows = json.loads(opener.open(f"http://127.0.0.1:{port}/api/sessions", timeout=30).read())
        key = rows[0]["id"]
        with opener.open(f"http://127.0.0.1:{port}/session/{key}", timeout=30) as response:
            assert response.status == 200
            assert b"refactor the shared module" in response.read()
    finally:
        for sock in flood:
            sock.close()
        errors = _stop(process)
    assert "Traceback" not in errors
    assert len(errors.splitlines()) <= 2, errors


def test_over_the_cap_of_live_connections_a_new_one_gets_503(home, alpha):
    """Event streams count in the cap and are never closed to make room (only a connection still
    waiting for its head is): with the cap full of streams, one more connection gets a 503 at once.
    The cap is a quarter of the descriptors the process may open: 12 of 48."""
    process, url, port = _start_dashboard(home, open_files=48)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    opener.open(url, timeout=30).close()
    streams = []
    try:
        for _ in range(12):
            stream = opener.open(f"http://127.0.0.1:{port}/events", timeout=30)
            streams.append(stream)
            assert stream.readline() == b"retry: 1000\n"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            received = b""
            while chunk := sock.recv(4096):
                received += chunk
        assert received.startswith(b"HTTP/1.1 503"), received
        assert all(not stream.closed for stream in streams)
    finally:
        for stream in streams:
            stream.close()
        errors = _stop(process)
    assert "Traceback" not in errors


_EXHAUSTED = textwrap.dedent(
    """
    import json, logging, os, resource, sys
    from starlette.testclient import TestClient
    from sidelight.config import Settings
    from sidelight.dashboard.app import create_app
    from sidelight.dashboard.data import Board
    from sidelight.plugins import Plugins

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("sidelight").addHandler(handler)
    clock = [1e9]
    settings = Settings.load()
    plugins = Plugins(entry_points=False)
    board = Board(settings, plugins, clock=lambda: clock[0])
    app = create_app(settings.state_dir, "tok", port=8765, settings=settings, plugins=plugins, board=board)
    out = {}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        client.get("/?token=tok")
        key = client.get("/api/sessions").json()[0]["id"]
        out["before"] = client.get(f"/session/{key}").status_code
        clock[0] += 3600  # the list of sessions is taken again at the next request
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        try:
            out["page"] = client.get(f"/session/{key}").status_code
            out["api"] = client.get(f"/api/sessions/{key}").status_code
            out["rows"] = client.get("/api/sessions").status_code
        finally:
            for fd in held:
                os.close(fd)
        out["after"] = client.get(f"/session/{key}").status_code
    out["said"] = [r.getMessage() for r in records if "file descriptors" in r.getMessage()]
    print(json.dumps(out))
    """
)


def test_out_of_descriptors_is_a_503_said_once_not_a_404(home, alpha):
    """Every descriptor taken (in a process of its own): the session page, its API and the rows answer
    503, where the page was a 404 (its listing came back empty); one log line says so; once the
    descriptors are back, the page is there again."""
    done = subprocess.run(
        [sys.executable, "-c", _EXHAUSTED],
        capture_output=True,
        text=True,
        env=_clean_env(home),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["before"], out["page"], out["api"], out["rows"], out["after"]) == (200, 503, 503, 503, 200), (
        out
    )
    assert len(out["said"]) == 1, out["said"]
    assert "Traceback" not in done.stderr


def test_accepts_that_fail_for_lack_of_descriptors_are_said_once(caplog):
    """asyncio reports each connection it could not accept (EMFILE) with a traceback: the dashboard's
    handler says it once, and leaves other errors to asyncio."""
    import asyncio
    import errno

    from sidelight.dashboard.data import Alarm
    from sidelight.dashboard.server import _loop_errors

    handle = _loop_errors(Alarm())
    loop = asyncio.new_event_loop()
    try:
        for _ in range(50):
            error = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
            handle(loop, {"message": "socket.accept() out of system resource", "exception": error})
        said = [r for r in caplog.records if "file descriptors" in r.getMessage()]
        assert len(said) == 1
        assert said[0].exc_info is None
        handle(loop, {"message": "something else", "exception": ValueError("x")})
        assert any(r.name == "asyncio" for r in caplog.records)
    finally:
        loop.close()


def test_a_request_past_its_deadline_is_a_503_and_the_stream_is_exempt():
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from sidelight.dashboard.app import Limits
    from sidelight.dashboard.data import Alarm

    release = threading.Event()

    async def slow(request: Any) -> PlainTextResponse:
        import anyio.to_thread

        await anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True)
        return PlainTextResponse("done")

    app = Starlette(routes=[Route("/slow", slow), Route("/events", slow)])
    app.add_middleware(Limits, alarm=Alarm(), streams=("/events",), seconds=0.5)
    try:
        with TestClient(app) as client:
            response = client.get("/slow")
            assert response.status_code == 503
            assert response.text == "the dashboard took too long to answer; try again\n"
            threading.Timer(1.0, release.set).start()
            assert client.get("/events").text == "done"
    finally:
        release.set()


def test_an_event_stream_lives_past_the_head_timeout(home, alpha):
    """The head timeout covers the request head only: a stream that started goes on, and still
    brings a change made after the head timeout would have closed a half-sent request."""
    process, url, port = _start_dashboard(home)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        opener.open(url, timeout=30).close()
        with opener.open(f"http://127.0.0.1:{port}/events", timeout=60) as stream:
            assert stream.readline() == b"retry: 1000\n"
            time.sleep(HEAD_SECONDS + 2)  # a wait beyond it, no time asserted
            alpha.write_text(
                alpha.read_text(encoding="utf-8") + prompt_line("a later prompt"), encoding="utf-8"
            )
            while b"a later prompt" not in (line := stream.readline()):
                assert line, "the stream ended"
    finally:
        errors = _stop(process)
    assert "Traceback" not in errors


# -- 8: FIFOs ----------------------------------------------------------------------------------------------


@pytest.fixture
def hook_world(tmp_path: Path) -> HookWorld:
    return HookWorld(tmp_path)


@pytest.mark.parametrize(
    ("host", "event"),
    [
        ("claude-code", "UserPromptSubmit"),  # the session's title: paths.read_title
        ("claude-code", "SessionStart"),
        ("codex", "UserPromptSubmit"),  # the session_meta head
        ("codex", "SessionEnd"),
    ],
)
def test_a_hook_whose_transcript_is_a_fifo_returns(hook_world, host, event):
    fifo = hook_world.folder / f"{session_id(98)}.jsonl"
    os.mkfifo(fifo)
    hook_world.prompt(1, "news beside a fifo")
    payload = {
        **json.loads(hook_world.payload(0)),
        "hook_event_name": event,
        "transcript_path": str(fifo),
        "session_id": session_id(98),
    }
    done = subprocess.run(
        [*cli_command(), "hook", host],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=hook_world.env(),
        timeout=30,  # it used to block on the FIFO's open for good
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""


def _returns(function: Any, fifo: Path) -> Any:
    """``function()`` run in a thread; when it blocks (on the FIFO), the FIFO gets a writer so the
    thread ends, and the test fails."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(function()), daemon=True)
    thread.start()
    thread.join(timeout=20)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout=20)
        pytest.fail(f"{function} blocked on a FIFO")
    return result[0]


def test_titles_and_heads_of_a_fifo_are_refused_at_once(tmp_path):
    from sidelight.agents.claude_code import TITLE_LINES
    from sidelight.engine.paths import NOT_REGULAR, head_string_field, open_regular, read_title

    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    assert _returns(lambda: read_title(fifo, TITLE_LINES), fifo) is None
    assert _returns(lambda: head_string_field(fifo, "cwd"), fifo) is None

    def refused() -> str:
        try:
            open_regular(fifo).close()
        except OSError as error:
            return str(error.strerror)
        return "opened"

    assert _returns(refused, fifo) == NOT_REGULAR
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)
    regular = tmp_path / "r.jsonl"
    regular.write_bytes(b"{}\n")
    with open_regular(regular) as file:
        assert file.read() == b"{}\n"


def test_the_cli_says_a_fifo_is_no_regular_file(tmp_path, home):
    """The core refuses a FIFO with its own error, said in words (not "Input/output error")."""
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    done = subprocess.run(
        [*cli_command(), "read", str(fifo)],
        capture_output=True,
        text=True,
        env=_clean_env(home),
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert (
        done.stderr
        == f"sidelight: {fifo}: cannot read the file: not a regular file (a FIFO, socket or device)\n"
    )


def test_the_server_runs_on_the_event_loop_uvicorn_would_choose(tmp_path, monkeypatch):
    """uvicorn picks its loop (uvloop when installed) through the config's loop factory: the dashboard
    runs its server on that loop, not on a plain asyncio loop of its own."""
    import asyncio

    import uvicorn

    from sidelight.config import Settings
    from sidelight.dashboard.server import listen, serve
    from sidelight.plugins import Plugins

    made: list[asyncio.AbstractEventLoop] = []
    served_on: list[asyncio.AbstractEventLoop] = []

    def factory() -> asyncio.AbstractEventLoop:
        made.append(asyncio.new_event_loop())
        return made[-1]

    async def serve_once(self, sockets=None):
        served_on.append(asyncio.get_running_loop())

    monkeypatch.setattr(uvicorn.Config, "get_loop_factory", lambda self: factory)
    monkeypatch.setattr(uvicorn.Server, "serve", serve_once)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr("sys.stdout", io.StringIO())
    sock = listen("127.0.0.1", 0)
    try:
        assert serve(Settings.load(), Plugins(entry_points=False), sock, "127.0.0.1", open_browser=False) == 0
    finally:
        sock.close()
    assert len(made) == 1 and served_on == made


def test_an_accept_retry_after_the_server_closed_is_no_traceback(caplog):
    """After an accept fails for lack of descriptors, asyncio retries a second later; a server stopped
    in that second has closed its socket, and the retry fails on descriptor -1: said quietly, not as
    asyncio's traceback (seen under load when the dashboard stops right after a flood)."""
    import asyncio

    from sidelight.dashboard.data import Alarm
    from sidelight.dashboard.server import _loop_errors

    def _start_serving() -> None:  # named as asyncio's callback is
        pass

    handle = _loop_errors(Alarm())
    loop = asyncio.new_event_loop()
    try:
        timer = loop.call_later(3600, _start_serving)
        handle(
            loop,
            {
                "message": "Exception in callback",
                "exception": ValueError("Invalid file descriptor: -1"),
                "handle": timer,
            },
        )
        timer.cancel()
        assert not any(r.name == "asyncio" for r in caplog.records)
        handle(loop, {"message": "something else", "exception": ValueError("x")})
        assert any(r.name == "asyncio" for r in caplog.records)
    finally:
        loop.close()
