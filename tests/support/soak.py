"""The soak test (``make soak``; not in the unit suite): many sessions written to at random, a watcher and
parallel hook readers, for a bounded time, then every reader's and the watcher's view compared with a
model of what was written.

- ``SOAK_SESSIONS`` (500) Claude-Code-shaped sessions in one project get lines at random rates: whole
  lines, lines written in two pieces (the second later), rotations (the file renamed away and a new one
  started under the same name) and deletions (re-created later).
- ``sidelight watch`` follows them (its choice of appends mode: the stat pass, at this size).
- ``SOAK_READERS`` (8) reader sessions in the same project run ``sidelight hook claude-code`` as Claude
  Code does, over and over, in parallel. After each run the reader's cursors are read: within one
  generation of a file (its inode) a cursor never moves back (nothing is read twice), and it always
  stands at a line boundary.
- At the end (the writer stopped, the pieces completed): every reader's cursor into every sibling stands
  at that file's end on its current inode (nothing lost), and for every session that was never rotated
  or deleted the watcher counted exactly the lines written (``status.json``).

Figures go to stdout as one JSON object; the exit status is 1 when a check failed.
Run: ``python -m tests.support.soak`` (``SOAK_SECONDS``, default 120).

Then ``SOAK_KILLS`` (100; 0: none) times ``kill -9`` of a watcher while sessions append, each time
restarted, and its event log checked against what was written (:mod:`tests.support.kill_watch`).
"""

from __future__ import annotations

import calendar
import contextlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from sidelight.config import Settings
from sidelight.cursors import CursorStore
from sidelight.engine.reads import cursor_file
from sidelight.records import Session
from tests.conftest import cli_command

SECONDS = float(os.environ.get("SOAK_SECONDS", "120"))
SESSIONS = int(os.environ.get("SOAK_SESSIONS", "500"))
READERS = int(os.environ.get("SOAK_READERS", "8"))
#: Lines a second over all sessions (each session gets a random share).
RATE = float(os.environ.get("SOAK_RATE", "1000"))
#: Prompts a reader makes at the end, at most, until its hook has nothing more to say.
LAST_LOOKS = 20


def line(session_id: str, cwd: str, n: int) -> bytes:
    kind = n % 3
    entry: dict[str, Any] = {
        "type": "user" if kind == 0 else "assistant",
        "sessionId": session_id,
        "cwd": cwd,
        "uuid": str(uuid.uuid4()),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
    }
    if kind == 0:
        entry["message"] = {"role": "user", "content": f"prompt {n} of {session_id[:8]}"}
    else:
        block = (
            {"type": "text", "text": f"reply {n}"}
            if kind == 1
            else {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"echo {n}"}}
        )
        entry["message"] = {"id": f"m-{session_id[:8]}-{n}", "role": "assistant", "content": [block]}
    return (json.dumps(entry, separators=(",", ":")) + "\n").encode()


class Writer:
    """Writes the sessions and keeps the model: per session, its complete lines in the current file,
    and whether it was ever rotated or deleted."""

    def __init__(self, folder: Path, cwd: str, ids: list[str], seed: int = 7) -> None:
        self.folder, self.cwd, self.ids = folder, cwd, ids
        self.rng = random.Random(seed)
        self.weights = [self.rng.expovariate(1.0) for _ in ids]  # random rates: a few busy, many quiet
        self.lines = dict.fromkeys(ids, 0)
        self.counter = dict.fromkeys(ids, 0)
        self.pending: dict[str, bytes] = {}
        self.reset: set[str] = set()
        self.gone: set[str] = set()
        self.figures = {"lines": 0, "pieces": 0, "rotations": 0, "deletions": 0, "recreations": 0}
        #: When each session was last written to (monotonic), and how many of its lines came in pieces:
        #: what the report shows of a session the watcher counted wrong.
        self.last_write = dict.fromkeys(ids, 0.0)
        self.pieces = dict.fromkeys(ids, 0)
        for session_id in ids:
            self._append(session_id, whole=True)

    def path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.jsonl"

    def _append(self, session_id: str, whole: bool) -> None:
        self.counter[session_id] += 1
        data = line(session_id, self.cwd, self.counter[session_id])
        self.last_write[session_id] = time.monotonic()
        with self.path(session_id).open("ab") as file:
            if whole:
                file.write(data)
                self.lines[session_id] += 1
                self.figures["lines"] += 1
            else:
                cut = self.rng.randrange(1, len(data) - 1)
                file.write(data[:cut])
                self.pending[session_id] = data[cut:]
                self.figures["pieces"] += 1
                self.pieces[session_id] += 1

    def finish_piece(self, session_id: str) -> None:
        rest = self.pending.pop(session_id, None)
        if rest is not None:
            self.last_write[session_id] = time.monotonic()
            with self.path(session_id).open("ab") as file:
                file.write(rest)
            self.lines[session_id] += 1
            self.figures["lines"] += 1

    def step(self) -> None:
        session_id = self.rng.choices(self.ids, self.weights)[0]
        roll = self.rng.random()
        if session_id in self.gone:
            if roll < 0.2:  # a deleted session comes back
                self.gone.discard(session_id)
                self.lines[session_id] = 0
                self._append(session_id, whole=True)
                self.figures["recreations"] += 1
            return
        if session_id in self.pending:
            self.finish_piece(session_id)
        elif roll < 0.90:
            self._append(session_id, whole=True)
        elif roll < 0.98:
            self._append(session_id, whole=False)
        elif roll < 0.993:
            self.path(session_id).replace(self.path(session_id).with_suffix(".jsonl.1"))
            self.lines[session_id] = 0
            self.reset.add(session_id)
            self._append(session_id, whole=True)
            self.figures["rotations"] += 1
        else:
            self.path(session_id).unlink()
            self.reset.add(session_id)
            self.gone.add(session_id)
            self.figures["deletions"] += 1

    def finish(self) -> None:
        for session_id in list(self.pending):
            self.finish_piece(session_id)


def describe_wrong(
    wrong: dict[str, tuple[int | None, int]], writer: Writer, state: Path, root: Path, started: float
) -> list[dict[str, Any]]:
    """What to look at for the sessions the watcher counted wrong (at most 20): its count and the
    model's, the file (size, lines, inode, last modification), the watcher's cursor (where it stands,
    as a line number and the time the line there was written), when the writer last wrote, how many
    lines came in two pieces, and what the watcher logged about it. Times are seconds from the start."""
    try:
        cursors = CursorStore(state / "watch" / "cursors.json").read("watcher")
    except OSError:
        cursors = {}
    logged = (root / "watcher.log").read_text(errors="replace").splitlines()
    wall_start = time.time() - (time.monotonic() - started)
    out: list[dict[str, Any]] = []
    for key, (counted, written) in list(wrong.items())[:20]:
        session_id = key.split(":", 1)[1]
        path = writer.path(session_id)
        record: dict[str, Any] = {"session": session_id[:8], "counted": counted, "written": written}
        try:
            data = path.read_bytes()
            stat = path.stat()
        except OSError as error:
            record["file"] = str(error)
            data, stat = b"", None
        if stat is not None:
            record["size"] = stat.st_size
            record["file_lines"] = data.count(b"\n")
            record["inode"] = stat.st_ino
            record["mtime"] = round(stat.st_mtime - wall_start, 3)
        record["last_write"] = round(writer.last_write[session_id] - started, 3)
        record["pieces"] = writer.pieces[session_id]
        entry = cursors.get(key)
        if entry is not None:
            offset = int(entry.get("offset", -1))
            record["cursor"] = {"offset": offset, "inode": entry.get("inode")}
            record["cursor_line"] = data[: max(offset, 0)].count(b"\n")
            # When the first line the watcher did not count was written (its own timestamp).
            rest = data[max(offset, 0) :].split(b"\n", 1)[0]
            with contextlib.suppress(ValueError, KeyError, TypeError):
                stamp = json.loads(rest)["timestamp"]
                record["first_uncounted_at"] = round(
                    calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) - wall_start, 1
                )
        record["log"] = [line[:200] for line in logged if session_id in line][-3:]
        out.append(record)
    return out


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="sidelight-soak-"))
    home, cwd = root / "home", root / "project"
    cwd.mkdir(parents=True)
    folder = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(cwd))
    folder.mkdir(parents=True)
    state = home / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_"))}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(state), SIDELIGHT_TIME_BUDGET="30s")
    writer_ids = [str(uuid.uuid4()) for _ in range(SESSIONS)]
    reader_ids = [str(uuid.uuid4()) for _ in range(READERS)]
    writer = Writer(folder, str(cwd), writer_ids)
    for reader_id in reader_ids:
        (folder / f"{reader_id}.jsonl").write_bytes(line(reader_id, str(cwd), 0))
    problems: list[str] = []
    figures: dict[str, Any] = {
        "sessions": SESSIONS,
        "readers": READERS,
        "seconds": SECONDS,
        "root": str(root),
    }

    watcher_log = (root / "watcher.log").open("w")
    watcher = subprocess.Popen(
        [*cli_command(), "watch", "--debounce", "250ms"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=watcher_log,
        text=True,
    )
    stop = threading.Event()
    hooks = {"runs": 0, "failures": 0, "slowest": 0.0}
    hooks_lock = threading.Lock()

    def run_hook(reader_id: str) -> bool:
        """Runs the reader's prompt hook; whether it said anything."""
        payload = {
            "session_id": reader_id,
            "transcript_path": str(folder / f"{reader_id}.jsonl"),
            "cwd": str(cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "what did the others do?",
        }
        started = time.monotonic()
        done = subprocess.run(
            [*cli_command(), "hook", "claude-code"],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=120,
            check=False,
        )
        took = time.monotonic() - started
        ok = done.returncode == 0
        if ok and done.stdout.strip():
            try:
                json.loads(done.stdout)
            except ValueError:
                ok = False
        with hooks_lock:
            hooks["runs"] += 1
            hooks["slowest"] = max(hooks["slowest"], took)
            if not ok:
                hooks["failures"] += 1
                problems.append(
                    f"hook of {reader_id[:8]}: exit {done.returncode}, stdout {done.stdout[:200]!r}"
                )
        return ok and bool(done.stdout.strip())

    settings = Settings.load(env=env, home=home)

    def cursors_of(reader_id: str, settled: bool = False) -> dict[str, Any]:
        """The reader's cursors; ``settled``: once they moved past what its last hook was told (a warm
        hook exits before the watcher moves them, under the reader's reading lock, which is taken
        here)."""
        key = f"claude-code:{reader_id}"
        reading = Session(key=key, name=key, path=folder, format="claude-code", group="", resolver="")
        store = CursorStore(cursor_file(reading, settings))
        if settled:
            lock = store.reading(key, time.monotonic() + 60)
            if lock is None:
                problems.append(f"{reader_id[:8]}: its reading lock was still held after 60 s")
            else:
                lock.release()
        try:
            data = json.loads(cursor_file(reading, settings).read_bytes())
        except (OSError, ValueError):
            return {}
        found: dict[str, Any] = data.get(key, {})
        return found

    def reader(reader_id: str) -> None:
        seen: dict[str, tuple[int, int]] = {}  # writer -> (inode, offset)
        while not stop.is_set():
            run_hook(reader_id)
            for key, entry in cursors_of(reader_id).items():
                inode, offset = int(entry.get("inode", 0)), int(entry["offset"])
                before = seen.get(key)
                if before is not None and before[0] == inode and offset < before[1]:
                    # Judged at the end: a session that was rotated or deleted may get its old inode
                    # number back (the file system reuses them), and then starts over, reported.
                    backwards.append((reader_id, key, before[1], offset))
                seen[key] = (inode, offset)

    backwards: list[tuple[str, str, int, int]] = []
    threads = [threading.Thread(target=reader, args=(r,), name=f"reader-{r[:8]}") for r in reader_ids]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    tick, ops = 0.01, 0
    deadline = started + SECONDS
    while time.monotonic() < deadline:
        for _ in range(max(1, int(RATE * tick))):
            writer.step()
            ops += 1
        time.sleep(tick)
    writer.finish()
    stop.set()
    for thread in threads:
        thread.join(timeout=300)
    figures["writer"] = {**writer.figures, "operations": ops}
    restarts = 0
    for reader_id, key, was, now in backwards:
        if key.split(":", 1)[1] in writer.reset:
            restarts += 1  # a new generation on a reused inode, read again from its start
        else:
            problems.append(f"{reader_id[:8]} -> {key}: cursor went back from {was} to {now}")
    figures["cursor_restarts_after_rotation"] = restarts

    # Nothing lost: once a reader's prompts have nothing more to say, its cursor stands at each sibling's
    # end. A digest holds what fits in 500 characters, and the most relevant siblings it left out
    # (digest.CARRIED_OVER) keep their news for the next prompts: a few last looks say it all.
    time.sleep(1.0)
    for reader_id in reader_ids:
        for _ in range(LAST_LOOKS):
            if not run_hook(reader_id):
                break
        else:
            problems.append(f"{reader_id[:8]}: still had news after {LAST_LOOKS} last looks")
        cursors = cursors_of(reader_id, settled=True)
        for session_id in writer_ids:
            if session_id in writer.gone:
                continue
            path = writer.path(session_id)
            stat = path.stat()
            entry = cursors.get(f"claude-code:{session_id}")
            if (
                entry is None
                or int(entry["offset"]) != stat.st_size
                or int(entry.get("inode", -1)) != stat.st_ino
            ):
                problems.append(
                    f"{reader_id[:8]} -> {session_id[:8]}: cursor {entry} at the end of {stat.st_size}"
                )
    figures["hooks"] = dict(hooks)

    # The watcher counted every line of the sessions that were never rotated or deleted, exactly once.
    steady = [s for s in writer_ids if s not in writer.reset]
    want = {f"claude-code:{s}": writer.lines[s] for s in steady}
    counted: dict[str, int] = {}
    wait_until = time.monotonic() + 120
    while time.monotonic() < wait_until:
        try:
            rows = json.loads((state / "status.json").read_bytes()).get("sessions") or []
        except (OSError, ValueError):
            rows = []
        counted = {row["key"]: int(row.get("lines") or 0) for row in rows if row.get("key") in want}
        if counted == want:
            break
        time.sleep(0.5)
    wrong = {k: (counted.get(k), n) for k, n in want.items() if counted.get(k) != n}
    if wrong:
        problems.append(
            f"watcher counts (counted, written) differ for {len(wrong)}: {list(wrong.items())[:5]}"
        )
        figures["wrong_sessions"] = describe_wrong(wrong, writer, state, root, started)
        # What to look at next time: whether the watcher was still passing, and what it logged.
        try:
            snapshot = json.loads((state / "status.json").read_bytes())
            problems.append(
                f"the watcher's snapshot was written {time.time() - float(snapshot['updated']):.0f} s "
                f"before the check, after {snapshot.get('scans')} scans"
            )
        except (OSError, ValueError, KeyError, TypeError):
            problems.append("the watcher's snapshot cannot be read")
        logged = (root / "watcher.log").read_text(errors="replace").splitlines()
        # The log has no levels: what is not routine (a rotation or deletion noticed), and its end.
        routine = ("reading its recent tail again", "is gone; forgetting")
        unusual = [line for line in logged if not any(r in line for r in routine)]
        problems.extend(f"watcher log: {line[:300]}" for line in unusual[-15:])
    try:
        fields = Path(f"/proc/{watcher.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        figures["watcher_cpu_seconds"] = round(cpu, 1)
        figures["watcher_cpu_percent"] = round(100 * cpu / (time.monotonic() - started), 1)
    except (OSError, IndexError, ValueError):
        pass
    watcher.send_signal(signal.SIGTERM)
    try:
        watcher.wait(timeout=60)
    except subprocess.TimeoutExpired:
        watcher.kill()
        watcher.wait()
        problems.append("the watcher did not stop within 60 s of SIGTERM")
    watcher_log.close()
    if watcher.returncode != 0:
        tail = (root / "watcher.log").read_text(errors="replace")[-500:]
        problems.append(f"the watcher exited {watcher.returncode}: {tail}")
    figures["steady_sessions"] = len(steady)
    figures["watcher_lines_checked"] = sum(want.values())
    figures["soak_process_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    figures["problems"] = problems[:40]
    figures["ok"] = not problems
    sys.stdout.write(json.dumps(figures, indent=1) + "\n")
    return 0 if not problems else 1


if __name__ == "__main__":
    from tests.support import kill_watch

    # Then the watcher killed -9 at random while sessions append (SOAK_KILLS times, 0: not at all).
    raise SystemExit(max(main(), kill_watch.soak(int(os.environ.get("SOAK_KILLS", "100")))))
