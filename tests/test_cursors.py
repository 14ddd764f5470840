"""The cursor store: seed-compatible, merging, atomic, locked, self-healing, private.

The crash and concurrency tests run a driver script in a fresh interpreter that forks its writers, so
many processes start in milliseconds and no fork happens inside pytest.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from sidelight import Cursor
from sidelight._fast import jsonio
from sidelight.cursors import CursorStore
from sidelight.statefile import SharedState, parse_json_object

CURSOR = Cursor(
    offset=1234, dev=2049, inode=77, head_len=4096, head_hash=2**63 + 5, tail_hash=99, last_message=0
)


def entry(offset: int, **more: Any) -> dict[str, Any]:
    return {**CURSOR.as_dict(), "offset": offset, **more}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "sidelight.cursors" and r.levelno >= 30]


def run_driver(script: str, *args: object, timeout: float = 60) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# -- the basic contract -----------------------------------------------------------------------------


def test_round_trip_keeps_every_field(tmp_path):
    store = CursorStore(tmp_path / "cursors.json")
    subagent = entry(10, tail_hash=7)
    discord = entry(1234, extra={"/x/agent-a.jsonl": subagent}, note=["any", {"json": None}, 1.5])
    store.update("main", {"discord": discord, "email": entry(0)})

    assert store.read("main") == {"discord": discord, "email": entry(0)}
    assert Cursor.from_dict(store.read("main")["discord"]) == CURSOR
    # A second store on the same file (another process, say) sees the same thing.
    assert CursorStore(str(tmp_path / "cursors.json")).read("main") == store.read("main")
    assert store.readers() == ["main"]
    assert store.read("nobody") == {}


def test_missing_file_reads_empty_and_is_not_created(tmp_path):
    store = CursorStore(tmp_path / "no" / "such" / "cursors.json")
    assert store.read("main") == {}
    assert store.readers() == []
    store.update("main", {})  # nothing to do: nothing written
    assert not (tmp_path / "no").exists()


def test_read_returns_a_snapshot(tmp_path):
    store = CursorStore(tmp_path / "cursors.json")
    store.update("main", {"discord": entry(5)})
    snapshot = store.read("main")
    snapshot["discord"]["offset"] = 999
    snapshot["ghost"] = entry(1)
    assert store.read("main") == {"discord": entry(5)}


def test_seed_file_loads_and_its_offsets_are_honoured(tmp_path):
    path = tmp_path / "session-cursors.json"
    path.write_text('{"main": {"discord": {"offset": 1234}}}')
    store = CursorStore(path)
    assert store.read("main") == {"discord": {"offset": 1234}}

    store.update("main", {"email": entry(50)})
    assert store.read("main") == {"discord": {"offset": 1234}, "email": entry(50)}
    store.update("main", {"discord": entry(2000)})
    assert json.loads(path.read_bytes()) == {"main": {"discord": entry(2000), "email": entry(50)}}


def test_update_replaces_only_the_given_writers_of_the_given_reader(tmp_path):
    store = CursorStore(tmp_path / "cursors.json")
    store.update("main", {"discord": entry(1), "email": entry(2)})
    store.update("discord", {"main": entry(3), "email": entry(4)})

    store.update("main", {"discord": entry(10)})
    assert store.read("main") == {"discord": entry(10), "email": entry(2)}
    assert store.read("discord") == {"main": entry(3), "email": entry(4)}

    store.update("discord", {"web": entry(5)}, remove=["email", "never-there"])
    assert store.read("discord") == {"main": entry(3), "web": entry(5)}
    assert store.read("main") == {"discord": entry(10), "email": entry(2)}

    # Removing wins over setting; a reader left with nothing is dropped.
    store.update("main", {"discord": entry(11)}, remove=["discord", "email"])
    assert store.readers() == ["discord"]
    assert store.read("main") == {}


def test_update_merges_with_the_file_as_it_is_on_disk(tmp_path):
    path = tmp_path / "cursors.json"
    first, second = CursorStore(path), CursorStore(path)
    first.update("main", {"discord": entry(1)})
    second.update("main", {"email": entry(2)})
    # Someone else (the seed tool, a user) edits the file between two updates.
    state = json.loads(path.read_bytes())
    state["other"] = {"x": {"offset": 9}}
    path.write_text(json.dumps(state))
    first.update("main", {"discord": entry(3)})
    assert json.loads(path.read_bytes()) == {
        "main": {"discord": entry(3), "email": entry(2)},
        "other": {"x": {"offset": 9}},
    }


@pytest.mark.parametrize("fast", [False, True])
def test_replace_writes_one_readers_entries_without_reading_the_file(tmp_path, monkeypatch, fast):
    path = tmp_path / "cursors.json"
    store = CursorStore(path, fast=fast)
    store.update("watcher", {"a": entry(1), "b": entry(2)})
    store.update("other", {"x": entry(9)})

    # Whatever the file holds is not read back: a file that would not even parse is simply replaced.
    path.write_text("not json")
    monkeypatch.setattr(SharedState, "_read_bytes", lambda self: pytest.fail("replace read the file"))
    store.replace("watcher", {"b": entry(3), "c": entry(4)})
    monkeypatch.undo()
    assert json.loads(path.read_bytes()) == {"watcher": {"b": entry(3), "c": entry(4)}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    before = path.read_bytes()
    with pytest.raises(ValueError, match="offset"):
        store.replace("watcher", {"b": entry(5), "c": {"offset": -1}})
    with pytest.raises(TypeError):
        store.replace("watcher", {1: entry(5)})  # type: ignore[dict-item]
    assert path.read_bytes() == before

    store.replace("watcher", {})
    assert store.readers() == []


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"dev": 1}, ValueError),
        ({"offset": -1}, ValueError),
        ({"offset": "12"}, ValueError),
        ({"offset": True}, ValueError),
        ({"offset": 1.0}, ValueError),
        ({"offset": 1, "x": float("nan")}, ValueError),
        ({"offset": 1, "x": Path("/not/json")}, TypeError),
        (12, ValueError),
    ],
)
def test_bad_entries_are_refused_before_anything_is_written(tmp_path, bad, error):
    path = tmp_path / "cursors.json"
    store = CursorStore(path)
    store.update("main", {"discord": entry(1)})
    before = path.read_bytes()
    with pytest.raises(error):
        store.update("main", {"email": entry(2), "discord": bad})
    assert path.read_bytes() == before
    with pytest.raises(TypeError):
        store.update("main", {1: entry(2)})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        store.update("main", {}, remove="discord")
    assert path.read_bytes() == before


# -- damaged files ----------------------------------------------------------------------------------


def test_malformed_entries_are_dropped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "cursors.json"
    path.write_text(
        json.dumps(
            {
                "main": {
                    "discord": {"offset": 5},
                    "neg": {"offset": -3},
                    "str": {"offset": "7"},
                    "none": {"dev": 1},
                    "bare": 12,
                },
                "gone": {"only": {"offset": None}},
            }
        )
    )
    store = CursorStore(path)
    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        assert store.read("main") == {"discord": {"offset": 5}}
    dropped = warnings_of(caplog)
    assert len(dropped) == 5
    assert all("dropping" in message for message in dropped)
    assert store.readers() == ["main"]
    assert not list(tmp_path.glob("*.corrupt-*"))  # not a corrupt file

    store.update("main", {"email": {"offset": 1}})
    assert json.loads(path.read_bytes()) == {"main": {"discord": {"offset": 5}, "email": {"offset": 1}}}


CORRUPT = {
    "not json": b"hello, world",
    "truncated": b'{"main": {"discord": {"offset": 12',
    "a list": b'[{"main": {}}]',
    "a number": b"42",
    "reader not an object": b'{"main": [1, 2]}',
    "not utf-8": b'{"main": {"\xff\xfe": {"offset": 1}}}',
    "nan is not a reader": b'{"main": NaN}',
    "too deep": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("data", CORRUPT.values(), ids=CORRUPT.keys())
@pytest.mark.parametrize("first", ["read", "update"])
def test_corrupt_file_is_moved_aside_and_rebuilt(tmp_path, caplog, data, first):
    path = tmp_path / "cursors.json"
    path.write_bytes(data)
    store = CursorStore(path)
    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        if first == "read":
            assert store.read("main") == {}
            assert not path.exists()
        store.update("main", {"discord": entry(7)})
    (aside,) = tmp_path.glob("cursors.json.corrupt-*")
    assert aside.read_bytes() == data
    assert aside.name.endswith("Z")
    assert any("corrupt" in message and aside.name in message for message in warnings_of(caplog))
    assert json.loads(path.read_bytes()) == {"main": {"discord": entry(7)}}
    assert store.read("main") == {"discord": entry(7)}


def test_two_corruptions_keep_both_copies(tmp_path, caplog):
    path = tmp_path / "cursors.json"
    store = CursorStore(path)
    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        for data in (b"first", b"second"):
            path.write_bytes(data)
            assert store.read("main") == {}
    assert sorted(p.read_bytes() for p in tmp_path.glob("cursors.json.corrupt-*")) == [b"first", b"second"]


def test_empty_file_reads_as_empty_quietly(tmp_path, caplog):
    path = tmp_path / "cursors.json"
    path.write_bytes(b"\n")
    store = CursorStore(path)
    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        assert store.read("main") == {}
        store.update("main", {"discord": entry(1)})
    assert warnings_of(caplog) == []
    assert store.read("main") == {"discord": entry(1)}


def test_corrupt_file_that_cannot_be_moved_still_reads_empty(tmp_path, caplog):
    # The lock file cannot be created (a directory stands in its place): read must still not raise.
    path = tmp_path / "cursors.json"
    path.write_bytes(b"garbage")
    (tmp_path / "cursors.json.lock").mkdir()
    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        assert CursorStore(path).read("main") == {}
    assert any("cannot be moved aside" in message for message in warnings_of(caplog))
    assert path.read_bytes() == b"garbage"


# -- permissions and write failures -----------------------------------------------------------------


def test_files_are_0600_and_created_directories_0700(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "state" / "sidelight" / "cursors.json"
        CursorStore(path).update("main", {"discord": entry(1)})
    finally:
        os.umask(old)
    assert mode(path) == 0o600
    assert mode(path.with_name("cursors.json.lock")) == 0o600
    assert mode(tmp_path / "state") == 0o700
    assert mode(tmp_path / "state" / "sidelight") == 0o700
    assert sorted(p.name for p in path.parent.iterdir()) == ["cursors.json", "cursors.json.lock"]


def test_an_existing_world_readable_file_becomes_0600(tmp_path):
    (tmp_path / "volute").mkdir()
    (tmp_path / "volute").chmod(0o755)
    path = tmp_path / "volute" / "session-cursors.json"
    path.write_text('{"main": {"discord": {"offset": 1}}}')
    path.chmod(0o644)
    CursorStore(path).update("main", {"email": entry(2)})
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o755  # an existing directory is left alone


def _fail_with(code: int):
    def fail(*args: object) -> None:
        raise OSError(code, os.strerror(code))

    return fail


@pytest.mark.parametrize("how", ["disk full on write", "rename fails", "tmp is a dir"])
def test_write_failure_raises_and_leaves_the_old_file(tmp_path, monkeypatch, how):
    path = tmp_path / "cursors.json"
    store = CursorStore(path)
    store.update("main", {"discord": entry(1)})
    before = path.read_bytes()
    if how == "disk full on write":
        monkeypatch.setattr(os, "write", _fail_with(errno.ENOSPC))
    elif how == "rename fails":
        monkeypatch.setattr(os, "replace", _fail_with(errno.EIO))
    else:
        (tmp_path / "cursors.json.tmp").mkdir()
    with pytest.raises(OSError):
        store.update("main", {"discord": entry(2)})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["cursors.json", "cursors.json.lock"]
    assert store.read("main") == {"discord": entry(1)}


def test_cursor_files_skip_fsync_and_durable_state_files_fail_whole_on_it(tmp_path, monkeypatch):
    """Cursor files are renamed into place without fsync (docs/guarantees.md, guarantee 2); a durable
    state file whose fsync fails raises and keeps its old version."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    CursorStore(tmp_path / "cursors.json").update("main", {"discord": entry(1)})
    assert synced == []
    path = tmp_path / "state.json"
    state: SharedState[dict[str, Any]] = SharedState(
        path, parse_json_object, lambda d: json.dumps(d).encode()
    )
    state.update(lambda _: {"a": 1})
    assert len(synced) == 2  # the file, then its directory
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", _fail_with(errno.ENOSPC))
    with pytest.raises(OSError):
        state.update(lambda _: {"a": 2})
    assert path.read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory_raises_and_leaves_the_old_file(tmp_path):
    path = tmp_path / "ro" / "cursors.json"
    store = CursorStore(path)
    store.update("main", {"discord": entry(1)})
    before = path.read_bytes()
    path.parent.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            store.update("main", {"discord": entry(2)})
        assert path.read_bytes() == before
        assert store.read("main") == {"discord": entry(1)}
    finally:
        path.parent.chmod(0o700)


def test_a_file_in_place_of_the_directory(tmp_path):
    (tmp_path / "state").write_text("not a directory")
    store = CursorStore(tmp_path / "state" / "cursors.json")
    assert store.read("main") == {}
    with pytest.raises(NotADirectoryError):
        store.update("main", {"discord": entry(1)})
    assert (tmp_path / "state").read_text() == "not a directory"


# -- crashes and concurrency ------------------------------------------------------------------------


def test_the_file_holds_the_old_state_until_the_new_one_is_complete(tmp_path, monkeypatch):
    path = tmp_path / "cursors.json"
    store = CursorStore(path)
    store.update("main", {"discord": entry(1)})
    before = path.read_bytes()
    seen: list[bytes] = []
    real_replace = os.replace

    def replace(source: Any, target: Any) -> None:
        seen.append(path.read_bytes())
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    store.update("main", {"discord": entry(2)})
    assert seen
    assert seen[0] == before  # the temporary file is complete before it replaces the old one
    assert json.loads(path.read_bytes()) == {"main": {"discord": entry(2)}}


KILL_DRIVER = """
    import json, os, random, signal, sys, time
    from pathlib import Path
    from sidelight.cursors import CursorStore

    path, rounds, snaps = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    tmp = path.with_name(path.name + ".tmp")
    store = CursorStore(path)
    # A big file, so each write takes long enough to be killed in the middle of it.
    store.update("base", {f"w{i}": {"offset": i, "pad": "x" * 100} for i in range(2000)})
    mid_write = 0
    r = 0
    # At least `rounds` kills, and more (up to ten times as many) until a tenth of them came mid-write:
    # on a loaded machine the writer may not even have started when the kill comes.
    while r < rounds or (mid_write < rounds // 10 and r < 10 * rounds):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            os.write(wfd, b"go")
            # A slow disk: writes land 4 KiB at a time, so kills often come mid-write.
            real_write = os.write
            def slow_write(fd, data):
                time.sleep(0.0002)
                return real_write(fd, bytes(data[:4096]))
            os.write = slow_write
            k = 0
            while True:
                store.update("base", {f"w{k % 2000}": {"offset": k + 10_000, "pad": "y" * 100}})
                store.update(f"r{r}", {f"w{k % 50}": {"offset": k}}, remove=[f"w{(k + 25) % 50}"])
                k += 1
        os.close(wfd)
        os.read(rfd, 2)
        os.close(rfd)
        time.sleep(random.uniform(0.002, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if tmp.exists():
            mid_write += 1
            tmp.unlink()  # so the next round's count is its own
        (snaps / f"{r}.json").write_bytes(path.read_bytes())
        r += 1
    print(json.dumps({"mid_write": mid_write, "rounds": r}))
"""


def test_writers_killed_mid_write_never_leave_a_broken_file(tmp_path, caplog):
    rounds = 40
    path, snaps = tmp_path / "cursors.json", tmp_path / "snaps"
    snaps.mkdir()
    report = json.loads(run_driver(KILL_DRIVER, path, rounds, snaps))

    with caplog.at_level(logging.WARNING, logger="sidelight.cursors"):
        for r in range(report["rounds"]):
            state = json.loads((snaps / f"{r}.json").read_bytes())
            assert isinstance(state, dict)
            assert len(state["base"]) == 2000
            store = CursorStore(snaps / f"{r}.json")
            assert len(store.read("base")) == 2000
    assert warnings_of(caplog) == []
    # Some kills landed while the temporary file was being written, and the store carries on after them.
    assert report["mid_write"] >= rounds // 10, report
    store = CursorStore(path)
    store.update("after", {"x": entry(1)})
    assert store.read("after") == {"x": entry(1)}
    assert len(store.read("base")) == 2000


CONCURRENT_DRIVER = """
    import json, os, sys
    from pathlib import Path
    from sidelight.cursors import CursorStore

    path, procs, per = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = CursorStore(path)
    gate_r, gate_w = os.pipe()
    pids = []
    for i in range(procs):
        pid = os.fork()
        if pid == 0:
            os.close(gate_w)
            os.read(gate_r, 1)  # every process starts at once, when the gate closes
            code = 0
            try:
                for k in range(per):
                    extra = {f"/s/p{i}/agent-{k}.jsonl": {"offset": k}}
                    store.update("shared", {f"p{i}-{k}": {"offset": i * 1000 + k, "extra": extra}})
                    store.update(f"r{i}", {f"w{k}": {"offset": k}})
                store.update("shared", {}, remove=[f"p{i}-0"])
            except BaseException as error:
                print(f"process {i}: {error!r}", file=sys.stderr)
                code = 1
            os._exit(code)
        pids.append(pid)
    os.close(gate_r)
    os.close(gate_w)
    print(json.dumps([os.waitpid(pid, 0)[1] for pid in pids]))
"""


def test_64_processes_at_once_lose_no_update(tmp_path):
    procs, per = 64, 4
    path = tmp_path / "state" / "cursors.json"
    statuses = json.loads(run_driver(CONCURRENT_DRIVER, path, procs, per))
    assert statuses == [0] * procs

    store = CursorStore(path)
    assert sorted(store.readers()) == sorted(["shared", *(f"r{i}" for i in range(procs))])
    shared = store.read("shared")
    assert shared == {
        f"p{i}-{k}": {"offset": i * 1000 + k, "extra": {f"/s/p{i}/agent-{k}.jsonl": {"offset": k}}}
        for i in range(procs)
        for k in range(1, per)
    }
    for i in range(procs):
        assert store.read(f"r{i}") == {f"w{k}": {"offset": k} for k in range(per)}
    assert mode(path) == 0o600


def test_threads_of_one_process_lose_no_update(tmp_path):
    store = CursorStore(tmp_path / "cursors.json")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for k in range(10):
                CursorStore(store.path).update("shared", {f"t{t}-{k}": {"offset": k}})
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert len(store.read("shared")) == 80


def test_a_kept_document_is_used_only_while_the_file_is_the_same(tmp_path):
    """A process keeps the last cursor document it read or wrote (the watcher answering hooks parses a
    session's cursors once): a changed file is read again, and a caller's change never reaches it."""
    parsed: list[bytes] = []

    def parse(data: bytes) -> dict[str, Any]:
        parsed.append(data)
        return parse_json_object(data)

    def copy(document: dict[str, Any]) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(document))
        return copied

    path = tmp_path / "doc.json"
    state = SharedState(path, parse, lambda d: json.dumps(d).encode(), copy=copy)
    state.update(lambda d: {**d, "a": {"n": 1}})
    parsed.clear()
    first = state.read()
    assert first == {"a": {"n": 1}} and parsed == []  # the written document was kept
    first["a"]["n"] = 99  # a caller's change stays its own
    assert state.read() == {"a": {"n": 1}}
    # Another process replaces the file: read again.
    path.write_text(json.dumps({"a": {"n": 2}}))
    assert state.read() == {"a": {"n": 2}} and len(parsed) == 1
    assert state.read() == {"a": {"n": 2}} and len(parsed) == 1
    # And a cursor store's copies are its own too.
    store = CursorStore(tmp_path / "cursors.json")
    store.update("main", {"discord": entry(1)})
    mine = store.read("main")
    mine["discord"]["offset"] = 5
    mine["email"] = entry(3)
    assert store.read("main") == {"discord": entry(1)}


# -- one parse and a small write per prompt ----------------------------------------------------------


def _other_process_updates(path: Path, reader: str, entries: dict[str, dict[str, Any]]) -> None:
    """``entries`` saved by another process (its own kept documents, its own write)."""
    run_driver(
        """
        import json, sys
        from sidelight.cursors import CursorStore
        CursorStore(sys.argv[1]).update(sys.argv[2], json.loads(sys.argv[3]))
        """,
        path,
        reader,
        json.dumps(entries),
    )


def test_a_commit_after_another_writer_keeps_what_it_saved(tmp_path):
    """The commit reuses the document its read parsed only while the file is the one it read: a
    write by another process in between is read again and nothing it saved is lost."""
    path = tmp_path / "cursors.json"
    store = CursorStore(path)
    store.update("main", {f"w{i}": entry(i) for i in range(50)})
    saved = store.read("main", shared=True)
    # Another hook of the session moves w1 on and saves a writer of its own, with the file's size
    # unchanged by the first (the identity is the device, inode, size and modification time).
    _other_process_updates(path, "main", {"w1": entry(1 + 8)})
    _other_process_updates(path, "main", {"new": entry(7)})
    store.update("main", {"w2": entry(20), "w3": entry(30)}, expected=saved)
    on_disk = json.loads(path.read_bytes())["main"]
    assert on_disk == {
        **{f"w{i}": entry(i) for i in range(50)},
        "w1": entry(9),
        "new": entry(7),
        "w2": entry(20),
        "w3": entry(30),
    }
    assert store.read("main") == on_disk


def test_a_commit_after_its_read_parses_nothing_and_dumps_only_what_it_moves(tmp_path, monkeypatch):
    """A prompt's hook reads a thousand entries and moves a few: its commit neither parses the file
    again nor dumps it whole, and the file it writes is the one a whole dump would have written."""
    path = tmp_path / "cursors.json"
    CursorStore(path).update("main", {f"claude-code:{i:04}": entry(24_000 + i) for i in range(1000)})
    store = CursorStore(path)
    saved = store.read("main", shared=True)
    loads, dumps = jsonio.loads, jsonio.dumps
    parsed: list[int] = []
    dumped: list[int] = []

    def counting_loads(data: Any, **options: Any) -> Any:
        parsed.append(len(data))
        return loads(data, **options)

    def counting_dumps(value: Any, **options: Any) -> str:
        text = dumps(value, **options)
        dumped.append(len(text))
        return text

    monkeypatch.setattr(jsonio, "loads", counting_loads)
    monkeypatch.setattr(jsonio, "dumps", counting_dumps)
    moved = {f"claude-code:{i:04}": entry(30_000 + i) for i in (3, 500, 999)}
    store.update("main", {**moved, "claude-code:new": entry(5)}, expected=saved)
    monkeypatch.undo()
    assert parsed == []
    assert dumped and max(dumped) < 1000  # names and entries, never the document
    data = path.read_bytes()
    document = json.loads(data)
    assert document == {"main": {**saved, **moved, "claude-code:new": entry(5)}}
    assert data == json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_file_its_parse_dropped_an_entry_from_is_written_whole(tmp_path, caplog):
    """An entry dropped on read (a bad offset) is not kept in the file by a commit that edits it."""
    path = tmp_path / "cursors.json"
    document = {"main": {"bad": {"offset": -1}, "a": entry(1), "b": entry(2)}}
    path.write_text(json.dumps(document, separators=(",", ":")))  # as the store writes: editable
    store = CursorStore(path)
    saved = store.read("main", shared=True)
    assert saved == {"a": entry(1), "b": entry(2)}
    store.update("main", {"a": entry(5)}, expected=saved)
    assert json.loads(path.read_bytes()) == {"main": {"a": entry(5), "b": entry(2)}}
    caplog.clear()
    assert store.read("main") == {"a": entry(5), "b": entry(2)}
    assert warnings_of(caplog) == []


@pytest.mark.parametrize(
    "written",
    [
        # Another writer's spacing, a name written with escapes, a name that is also a key inside
        # another entry, two readers, a name after a backslash in a string: each is written whole
        # (or edited where the edit is unambiguous) and reads back as the store's document.
        lambda doc: json.dumps(doc, indent=1),
        lambda doc: json.dumps(doc, separators=(",", ":")),
        lambda doc: json.dumps(doc, separators=(",", ":"), ensure_ascii=False),
    ],
    ids=["indented", "ascii", "compact"],
)
def test_commits_in_any_order_write_the_document_the_model_says(tmp_path, written):
    """A property test against a model: random saves, merges, additions and removals over files first
    written by other writers, names with quotes, backslashes, braces and non-ASCII letters, an entry
    holding another's name as a key: the file always reads back as the model, and is the store's own
    whole dump whenever it wrote it."""
    import random

    rng = random.Random(18)
    names = ["a", 'q"uote', "back\\slash", "br{a}ce,", "é", "claude-code:x", '":{', "w"]
    path = tmp_path / "cursors.json"
    model: dict[str, dict[str, Any]] = {
        "main": {name: entry(i, extra={"/p": {"offset": i}}) for i, name in enumerate(names[:4])}
    }
    model["main"]["holder"] = entry(3, waiting={"claude-code:x": 2}, nested={"é": entry(4)})
    path.write_text(written(model))
    for step in range(120):
        store = CursorStore(path)
        readers = list(model)
        reader = rng.choice([*readers, "other"] if step % 17 == 0 else readers)
        saved = store.read(reader, shared=True)
        assert saved == model.get(reader, {})
        change = {
            rng.choice(names): entry(rng.randrange(10**6), **({"files": ["x"]} if rng.random() < 0.2 else {}))
            for _ in range(rng.randrange(1, 4))
        }
        gone = {rng.choice(names)} if rng.random() < 0.1 else set()
        if rng.random() < 0.3:
            # Another process moved an entry meanwhile, further into the same file.
            moved = rng.choice(list(change))
            further = {**change[moved], "offset": change[moved]["offset"] + 1}
            _other_process_updates(path, reader, {moved: further})
            model.setdefault(reader, {})[moved] = further
            change[moved] = {**change[moved]}  # not further: the other process's cursor stays
        store.update(reader, change, remove=gone, expected=saved)
        mine = model.setdefault(reader, {})
        for writer, new in change.items():
            stored = mine.get(writer)
            if stored is None or stored == saved.get(writer) or stored["offset"] < new["offset"]:
                mine[writer] = new
        for writer in gone:
            mine.pop(writer, None)
        if not mine:
            model.pop(reader)
        data = path.read_bytes()
        assert json.loads(data) == model, step
        assert data == json.dumps(model, ensure_ascii=False, separators=(",", ":")).encode(), step


def test_parse_keeps_exactly_the_entries_the_rule_accepts(tmp_path, caplog):
    """The inline check of a good entry on read gives _entry_problem's verdict on every kind of value
    JSON can hold there."""
    from sidelight.cursors import _entry_problem

    values: list[Any] = [
        {"offset": 0},
        {"offset": 7, "dev": 1},
        {"offset": 2**64 - 1},
        {"offset": -1},
        {"offset": True},
        {"offset": False},
        {"offset": 1.0},
        {"offset": "1"},
        {"offset": None},
        {"offset": [1]},
        {"offset": {"n": 1}},
        {},
        {"dev": 1},
        [],
        [1],
        "x",
        1,
        None,
        True,
    ]
    document = {"main": {f"w{i}": value for i, value in enumerate(values)}}
    path = tmp_path / "cursors.json"
    path.write_text(json.dumps(document))
    kept = CursorStore(path).read("main")
    assert kept == {f"w{i}": v for i, v in enumerate(values) if _entry_problem(v) is None}
    assert len(warnings_of(caplog)) == sum(_entry_problem(v) is not None for v in values)


@pytest.mark.parametrize(
    "text",
    [
        # The same name and entry nested in an earlier entry: the match is not the only one.
        '{"main":{"holder":{"offset":1,"nested":{"w":{"offset":4}}},"w":{"offset":4}}}',
        # The name written with an escape by another writer, and another name that ends in it:
        # the one match follows a backslash, inside that other name.
        '{"main":{"x\\"w":{"offset":4},"\\u0077":{"offset":4}}}',
    ],
    ids=["nested", "escaped"],
)
def test_an_entry_is_edited_only_where_it_cannot_be_another(tmp_path, text):
    path = tmp_path / "cursors.json"
    path.write_text(text)
    before = json.loads(text)["main"]
    store = CursorStore(path)
    saved = store.read("main", shared=True)
    store.update("main", {"w": {"offset": 9}}, expected=saved)
    assert json.loads(path.read_bytes()) == {"main": {**before, "w": {"offset": 9}}}
