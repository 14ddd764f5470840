"""Fleet rates (group ``fleet``): records per second published to, and read back from, a real Redis
server on loopback (tests/support/redis_server.py).

- ``publish``: ``SESSIONS`` Claude Code sessions each get a prompt, an edit and a reply; the timed run
  is the publisher working through all of them
  (:meth:`sidelight.features.fleet.streams.Publisher.publish_pending`:
  the scan from its own cursors, one summarized, redacted record per session, pipelined ``XADD``s,
  the cursor commit), ``ROUNDS`` times over;
- ``read``: another host's reader catches up on ``READ_RECORDS`` records in one
  :func:`sidelight.features.fleet.streams.remote_activity` call (``XREAD`` batches, parsing, dedup, merging
  per remote
  session), as its hook would after a long absence.

One run each (``benchmark.pedantic``); ``extra_info`` records the records per second and what was
checked (every record on the stream, every message counted). Disabled by default, they run once as
smoke tests with small numbers.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents.claude_code import claude_project_dir
from sidelight.config import Settings
from sidelight.engine import discovery
from sidelight.features.fleet import streams as fleet
from sidelight.plugins import Plugins
from tests.support.redis_server import RedisServer


def _iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _lines(n: int, step: int, session: str, cwd: str) -> str:
    common = {"sessionId": session, "cwd": cwd, "timestamp": _iso()}
    prompt = {"type": "user", "message": {"role": "user", "content": f"step {step}: fix module {n}"}}
    edit = {
        "type": "assistant",
        "message": {
            "id": f"e{step}",
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": f"t{step}", "name": "Edit", "input": {"file_path": f"/p/m{n}.py"}}
            ],
        },
    }
    reply = {
        "type": "assistant",
        "message": {"id": f"r{step}", "role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    }
    return "".join(
        json.dumps({**entry, **common}, separators=(",", ":")) + "\n" for entry in (prompt, edit, reply)
    )


class _Machine:
    def __init__(self, root: Path, host: str, project: Path, url: str, scope: str) -> None:
        self.home = root / host
        self.folder = claude_project_dir(self.home / ".claude" / "projects", project)
        self.folder.mkdir(parents=True)
        self.project = project
        env = {
            "HOME": str(self.home),
            "SIDELIGHT_STATE_DIR": str(self.home / "state"),
            "SIDELIGHT_REDIS_URL": url,
            "SIDELIGHT_HOST_ID": host,
            "SIDELIGHT_FLEET_SCOPE": scope,
        }
        self.settings = Settings.load(env=env, home=self.home)
        self.plugins = Plugins(entry_points=False)

    def write(self, n: int, step: int) -> None:
        session = f"{n:08d}-0000-4000-8000-{n:012d}"
        with (self.folder / f"{session}.jsonl").open("a", encoding="utf-8") as file:
            file.write(_lines(n, step, session, str(self.project)))


@pytest.fixture
def machines(tmp_path: Path):
    with RedisServer(tmp_path / "redis") as server:
        project = tmp_path / "proj"
        project.mkdir()
        scope = f"bench{uuid.uuid4().hex[:8]}"
        yield server, [_Machine(tmp_path, h, project, server.url, scope) for h in ("host-a", "host-b")]


@pytest.mark.benchmark(group="fleet")
def test_publish_rate(benchmark, benchmarks_enabled, machines):
    server, (a, _b) = machines
    sessions, rounds = (1000, 5) if benchmarks_enabled else (40, 2)
    publisher = fleet.Publisher(a.settings, a.plugins)
    for n in range(sessions):
        a.write(n, 0)
    listed = discovery.list_sessions(a.settings, a.plugins)
    assert len(listed) == sessions
    timing: dict[str, float] = {"seconds": 0.0}

    def run() -> None:
        for step in range(1, rounds + 1):
            for n in range(sessions):
                a.write(n, step)
            publisher.note(listed)
            started = time.perf_counter()
            while publisher.publish_pending():
                pass
            timing["seconds"] += time.perf_counter() - started

    benchmark.pedantic(run, rounds=1, iterations=1)
    client = server.client()
    on_stream = client.xlen(f"sidelight:{a.settings.fleet_scope}")
    client.close()
    records = sessions * rounds
    assert on_stream == records == publisher.published
    benchmark.extra_info.update(
        sessions=sessions,
        records=records,
        records_per_second=round(records / timing["seconds"]),
        checked="every session's every round is one record on the stream",
    )


@pytest.mark.benchmark(group="fleet")
def test_read_rate(benchmark, benchmarks_enabled, machines):
    server, (a, b) = machines
    sessions, total = (100, 20_000) if benchmarks_enabled else (10, 1_000)
    stream = f"sidelight:{a.settings.fleet_scope}"
    b.write(0, 0)
    reader = discovery.list_sessions(b.settings, b.plugins)[0]
    # The reader's position: the start of the stream (an absence of `total` records).
    assert fleet.remote_activity(reader, b.settings, time.monotonic() + 5, True) == []
    client = server.client()
    pipe = client.pipeline(transaction=False)
    for i in range(total):
        n = i % sessions
        record: dict[str, Any] = {
            "v": fleet.RECORD_VERSION,
            "id": f"host-a/claude-code:s{n}/1:{i}",
            "host": "host-a",
            "session": {
                "key": f"claude-code:s{n}",
                "name": f"s{n}",
                "group": str(a.project),
                "format": "claude-code",
                "id": None,
            },
            "start": i,
            "end": i + 1,
            "user_messages": 1,
            "assistant_messages": 2,
            "tools": {"Edit": 1},
            "categories": {"edit": 1},
            "files_touched": [f"/p/m{n}.py"],
            "first_user_text": f"step {i}",
            "last_assistant_text": "Done.",
            "first_timestamp": _iso(),
            "last_timestamp": _iso(),
        }
        pipe.xadd(stream, fleet._fields(record))
    pipe.execute()
    client.close()
    found: list[Any] = []
    settings = replace(b.settings, time_budget=60.0)
    elapsed: dict[str, float] = {}

    def run() -> None:
        started = time.perf_counter()
        found[:] = fleet.remote_activity(reader, settings, time.monotonic() + 60, False)
        elapsed["seconds"] = time.perf_counter() - started

    benchmark.pedantic(run, rounds=1, iterations=1)
    assert len(found) == sessions
    assert sum(x.user_messages for x in found) == total
    benchmark.extra_info.update(
        records=total,
        remote_sessions=sessions,
        records_per_second=round(total / elapsed["seconds"]),
        checked="every record counted once, merged into one activity per remote session",
    )
