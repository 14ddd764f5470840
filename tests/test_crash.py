"""State survives crashes (issue 7, guarantee 2).

``kill -9`` at random moments, in a loop: of a real ``sidelight hook`` process, of a process that
does nothing but write cursors and watcher state, and of a real ``sidelight watch`` while sessions
append (its event log then holds every event once: issue 18). After every kill the files are readable and hold
either the old or the new state, never half of one; a corrupt or truncated file is moved aside with a
warning and rebuilt, and the next hook still works.

The fast variants run in the normal suite; the ``slow`` ones do the few hundred kills of the issue.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight.cursors import CursorStore
from sidelight.statefile import load_json_state
from tests.support import kill_watch
from tests.support.hook_world import HookWorld, context_of, session_id


def _check_cursor_file(world: HookWorld, reader: int) -> dict[str, dict[str, Any]]:
    """The reader's cursor file parses as it is on disk (no move-aside needed) and every offset is a line
    boundary within its transcript."""
    path = world.cursor_file(reader)
    if not path.exists():
        return {}
    state = json.loads(path.read_bytes())  # raises on a half-written file
    assert isinstance(state, dict)
    entries: dict[str, dict[str, Any]] = state.get(f"claude-code:{session_id(reader)}", {})
    for writer, entry in entries.items():
        n = int(writer.rsplit(":", 1)[1].split("-")[0])
        data = world.transcript(n).read_bytes()
        offset = entry["offset"]
        assert 0 <= offset <= len(data)
        assert offset == 0 or data[offset - 1 : offset] == b"\n"
    return entries


def _kill_hooks(world: HookWorld, kills: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    # How long a whole hook takes here: kills are spread over it, most of them late, where it writes.
    started = time.monotonic()
    assert world.run_hook(0).returncode == 0
    whole = time.monotonic() - started
    figures = {"kills": 0, "finished_first": 0, "cursor_changed": 0}
    i = 0
    # At least `kills` rounds, and more (up to five times as many) until some kill landed and some hook
    # got its cursors written first: a loaded machine can skew the timing either way.
    while i < kills or ((not figures["kills"] or not figures["cursor_changed"]) and i < 5 * kills):
        world.prompt(rng.randrange(1, world.sessions), f"prompt {i}")
        before = world.cursor_file(0).read_bytes() if world.cursor_file(0).exists() else b""
        process = subprocess.Popen(
            world.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=world.env(),
        )
        assert process.stdin is not None
        process.stdin.write(world.payload(0))
        process.stdin.close()
        time.sleep(rng.uniform(0.2 * whole, 1.1 * whole))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            figures["kills"] += 1
        else:
            figures["finished_first"] += 1
        process.wait(timeout=30)
        _check_cursor_file(world, 0)
        after = world.cursor_file(0).read_bytes() if world.cursor_file(0).exists() else b""
        figures["cursor_changed"] += before != after
        i += 1
    return figures


def _hook_after_kills_works(world: HookWorld) -> None:
    assert not list(world.cursor_file(0).parent.glob("*.corrupt-*"))
    world.prompt(1, "the prompt after the storm")
    # What the cursors left after the kills say is unread is exactly what the next hook reports.
    entries = _check_cursor_file(world, 0)
    unread: dict[int, int] = {}
    for n in range(1, world.sessions):
        offset = int(entries[f"claude-code:{session_id(n)}"]["offset"])
        unread[n] = world.transcript(n).read_bytes()[offset:].count(b"\n")
    done = world.run_hook(0)
    assert done.returncode == 0, done.stderr
    context = context_of(done.stdout)
    assert context is not None
    for n, count in unread.items():
        name = session_id(n)[:8]
        if count:
            assert f"{name} (just now, {count} message{'s' if count > 1 else ''})" in context
        else:
            assert name not in context
    # Everything is read now: the cursors stand at the ends of the siblings' files.
    entries = _check_cursor_file(world, 0)
    for n in range(1, world.sessions):
        key = f"claude-code:{session_id(n)}"
        assert entries[key]["offset"] == world.transcript(n).stat().st_size
    assert context_of(world.run_hook(0).stdout) is None


@pytest.mark.parametrize(
    "kills", [pytest.param(25, id="fast"), pytest.param(300, id="few-hundred", marks=pytest.mark.slow)]
)
def test_killing_hooks_at_random_leaves_cursors_whole(tmp_path: Path, kills: int) -> None:
    world = HookWorld(tmp_path, sessions=4)
    figures = _kill_hooks(world, kills, seed=kills)
    # Some kills must land before the cursor write and some after, or the loop proved nothing.
    assert figures["kills"] > 0
    assert figures["cursor_changed"] > 0
    _hook_after_kills_works(world)


# -- a process that only writes state ------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from sidelight.cursors import CursorStore
    from sidelight.watch.watcher import write_json_atomic

    state = Path(sys.argv[1])
    store = CursorStore(state / "cursors.json")
    pad = "x" * 200_000  # a large file: a long window for the kill to land inside a write
    start = int(sys.argv[2])
    print("ready", flush=True)
    for i in range(start, start + 10_000):
        store.update("reader", {"writer": {"offset": i, "pad": pad}, f"w{i % 7}": {"offset": i}})
        write_json_atomic(state / "lifecycle.json", {"version": i, "pad": pad})
    """
)


def _value(path: Path, key: str) -> int:
    data = json.loads(path.read_bytes())  # raises on a half-written file
    return int(data["reader"]["writer"]["offset"] if key == "cursor" else data["version"])


@pytest.mark.parametrize(
    "kills", [pytest.param(15, id="fast"), pytest.param(300, id="few-hundred", marks=pytest.mark.slow)]
)
def test_killing_a_state_writer_leaves_old_or_new_state(tmp_path: Path, kills: int) -> None:
    rng = random.Random(kills)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    cursors, lifecycle = state / "cursors.json", state / "lifecycle.json"
    last = {"cursor": -1, "lifecycle": -1}
    advanced = 0
    for _ in range(kills):
        start = max(last.values()) + 1
        process = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(state), str(start)], stdout=subprocess.PIPE
        )
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.05))
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        process.stdout.close()
        for key, path in (("cursor", cursors), ("lifecycle", lifecycle)):
            if path.exists():
                value = _value(path, key)
                # Old or new: never behind what was there, never a value no write finished.
                assert value >= last[key]
                advanced += value > last[key]
                last[key] = value
    assert advanced > 0
    # The store reads the file as it is (nothing moved aside) and the other writers' entries are whole.
    entries = CursorStore(cursors).read("reader")
    assert entries["writer"]["offset"] == last["cursor"]
    assert all(isinstance(e["offset"], int) for e in entries.values())
    assert not list(state.glob("*.corrupt-*"))
    assert load_json_state(lifecycle)["version"] == last["lifecycle"]


# -- damaged files are moved aside, and the next hook works --------------------------------------------


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty-object-of-lists", "binary"])
def test_a_damaged_cursor_file_is_moved_aside_and_the_hook_still_works(tmp_path: Path, damage: str) -> None:
    world = HookWorld(tmp_path, sessions=3)
    assert world.run_hook(0).returncode == 0
    path = world.cursor_file(0)
    good = path.read_bytes()
    path.write_bytes(
        {
            "truncated": good[: len(good) // 2],
            "garbage": b"{{{ not json",
            "empty-object-of-lists": b'{"claude-code:x": [1, 2]}',
            "binary": b"\x00\xff\xfe" * 100,
        }[damage]
    )
    world.prompt(2, "news after the damage")
    done = world.run_hook(0)
    assert done.returncode == 0, done.stderr
    context = context_of(done.stdout)
    # Rebuilt: the siblings are read again like a first look (their recent tail), news included.
    assert context is not None and "00000002 (just now, 2 messages)" in context
    aside = list(path.parent.glob(path.name + ".corrupt-*"))
    assert len(aside) == 1
    assert "corrupt" in world.log()
    _check_cursor_file(world, 0)
    json.loads(path.read_bytes())


def test_a_damaged_state_file_is_moved_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "lifecycle.json"
    path.write_bytes(b'{"version": 3, "sessions": {"a": [1, 2')  # cut off by a full disk
    with caplog.at_level(logging.WARNING, logger="sidelight.state"):
        assert load_json_state(path) is None
    assert not path.exists()
    (aside,) = tmp_path.glob("lifecycle.json.corrupt-*")
    assert aside.read_bytes().startswith(b'{"version": 3')
    assert "corrupt" in caplog.text and str(aside) in caplog.text
    # Missing now: nothing to say, nothing moved.
    assert load_json_state(path) is None
    path.write_text('{"version": 4}')
    assert load_json_state(path) == {"version": 4}
    assert len(list(tmp_path.glob("lifecycle.json.corrupt-*"))) == 1


def test_the_watchers_state_loader_moves_a_damaged_file_aside(tmp_path: Path) -> None:
    """The watcher loads its snapshot and lifecycle state through the same helper."""
    from sidelight.watch import runtime as watch

    path = tmp_path / "status.json"
    path.write_bytes(b'{"sessions": [')
    assert watch._read_json(path) is None
    assert list(tmp_path.glob("status.json.corrupt-*"))


# -- the watcher killed while sessions append: every event logged once (issue 18) ----------------------


def test_killing_the_watcher_at_random_logs_every_event_once(tmp_path: Path) -> None:
    """``kill -9`` of the real ``sidelight watch`` at random moments while sessions append prompts and
    tool uses (some lines written in two pieces) and end; restarted each time. The event log then holds
    every prompt and tool use written exactly once, with its line's timestamp and its text; each line
    whole, with a key, no key twice; one archive per session end logged (tests/support/kill_watch.py).
    ``make soak`` kills it more often (SOAK_KILLS)."""
    kills = 25
    figures, problems = kill_watch.run(tmp_path, kills, seed=kills)
    assert not problems, (figures, problems)
    assert figures["kills"] == kills
    # Kills landed after the log had events and before the cursors said so (read again, dropped by
    # the log), and session ends were read, or the loop proved nothing.
    assert figures["replays_dropped"] > 0, figures
    assert figures["session_ends_logged"] > 0, figures
    assert figures["archives"] == figures["session_ends_logged"]
