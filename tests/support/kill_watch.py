"""Kill the real ``sidelight watch`` (``kill -9``) at random moments while sessions append, restart it,
and check its event log against what was written (issue 18: events exactly once across crashes).

- ``sessions`` Claude-Code-shaped sessions in one project get prompts and tool uses, each line with its
  own timestamp (a few seconds before it is written: never the time it is read) and its own text; now
  and then a session ends (a ``SessionEnd`` in ``events.jsonl``, as the hook records it) and a later
  line starts its next life.
- A ``sidelight watch`` follows them; it is killed with ``SIGKILL`` after a random time, ``kills``
  times, and started again each time. At the end it is stopped with ``SIGTERM``.
- Then ``<state dir>/activity-events.jsonl`` must hold every prompt and tool use written exactly once,
  with the timestamp of its line and its own text; every line of the log must be whole JSON with a
  key, no key twice; and ``archive/`` must hold exactly one file per ``session_end`` logged, each from
  another ``SessionEnd`` record.

:func:`run` returns the figures and the problems found (empty: passed). The unit suite runs it with a
few dozen kills (``tests/test_crash.py``); ``make soak`` with ``SOAK_KILLS`` runs it with more.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import cli_command

#: How long the watcher may take to start and to stop (a loaded CI machine is slow).
TIMEOUT = 60.0


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class World:
    """A throwaway HOME with one Claude Code project, and the model of what was written to it."""

    root: Path
    sessions: int
    rng: random.Random
    ids: list[str] = field(default_factory=list)
    #: (session id, kind, text) -> the timestamp of its line: every prompt and tool use written.
    written: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: How many session ends the hook recorded.
    ends: int = 0
    counter: int = 0
    #: Sessions ended and not written to since (their next line starts a new life).
    ended: set[str] = field(default_factory=set)
    #: Sessions not written to until then (monotonic seconds).
    quiet: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.cwd = self.root / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.folder = (
            self.home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(self.cwd))
        )
        self.folder.mkdir(parents=True, exist_ok=True)
        self.state = self.home / "state"
        self.ids = [str(uuid.UUID(int=self.rng.getrandbits(128))) for _ in range(self.sessions)]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_"))}
        env.update(HOME=str(self.home), SIDELIGHT_STATE_DIR=str(self.state), SIDELIGHT_HANDOFF="off")
        return env

    def path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.jsonl"

    def _line(self, session_id: str, kind: str, text: str, stamp: str) -> bytes:
        entry: dict[str, Any] = {
            "type": "user" if kind == "prompt" else "assistant",
            "sessionId": session_id,
            "cwd": str(self.cwd),
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "timestamp": stamp,
        }
        if kind == "prompt":
            entry["message"] = {"role": "user", "content": text}
        else:
            self.counter += 1
            block = {"type": "tool_use", "id": f"t{self.counter}", "name": "Bash", "input": {"command": text}}
            entry["message"] = {"id": f"m{self.counter}", "role": "assistant", "content": [block]}
        return (json.dumps(entry, separators=(",", ":")) + "\n").encode()

    def step(self) -> None:
        """One write: a few lines to one session (sometimes cut in two writes), or a session's end."""
        session_id = self.rng.choice(self.ids)
        if self.quiet.get(session_id, 0.0) > time.monotonic():
            return
        if self.rng.random() < 0.03 and session_id not in self.ended and self.path(session_id).exists():
            self.end(session_id)
            return
        self.ended.discard(session_id)
        data = b""
        for _ in range(self.rng.randint(1, 4)):
            self.counter += 1
            kind = "prompt" if self.rng.random() < 0.4 else "tool"
            text = f"{kind} {self.counter} of {session_id[:8]}"
            # The time it happened: a few seconds before it is written, never when it is read.
            stamp = _iso(time.time() - self.rng.uniform(2.0, 6.0))
            self.written[(session_id, "prompt_submitted" if kind == "prompt" else "tool_executed", text)] = (
                stamp
            )
            data += self._line(session_id, kind, text, stamp)
        with self.path(session_id).open("ab") as file:
            if self.rng.random() < 0.2 and len(data) > 2:
                cut = self.rng.randrange(1, len(data) - 1)
                file.write(data[:cut])
                file.flush()
                time.sleep(0.002)
                data = data[cut:]
            file.write(data)

    def end(self, session_id: str) -> None:
        """The hook's record of a ``SessionEnd`` (``sidelight.features.hook._record``)."""
        record = {
            "time": time.time(),
            "host": "claude-code",
            "event": "SessionEnd",
            "session_id": session_id,
            "transcript_path": str(self.path(session_id)),
            "cwd": str(self.cwd),
            "source": None,
        }
        self.state.mkdir(parents=True, exist_ok=True, mode=0o700)
        with (self.state / "events.jsonl").open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
        self.ends += 1
        self.ended.add(session_id)
        # Quiet for a while, so that a running watcher reads the end (every half second) before the
        # session's next life begins: an end read after the next lines ends that life instead.
        self.quiet[session_id] = time.monotonic() + 1.5

    def start_watcher(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            # A long idle timeout: every session end in this test is a SessionEnd written above.
            [*cli_command(), "watch", "--debounce", "20ms", "--idle-timeout", "1h", "--reconcile", "1s"],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def all_read(self) -> bool:
        """Whether the watcher's saved cursors stand at the end of every transcript and its snapshot
        at the end of ``events.jsonl``: it has read everything."""
        try:
            cursors = json.loads((self.state / "watch" / "cursors.json").read_bytes()).get("watcher") or {}
            snapshot = json.loads((self.state / "status.json").read_bytes())
            events = self.state / "events.jsonl"
            if events.exists() and snapshot.get("hook_events_offset") != events.stat().st_size:
                return False
            return all(
                (cursors.get(f"claude-code:{s}") or {}).get("offset") == self.path(s).stat().st_size
                for s in self.ids
            )
        except (OSError, ValueError):
            return False

    def wait_started(self, process: subprocess.Popen[bytes], since: float) -> None:
        """Until the watcher wrote its first snapshot (it then holds the lock and read its state)."""
        deadline = time.monotonic() + TIMEOUT
        status = self.state / "status.json"
        while time.monotonic() < deadline and process.poll() is None:
            try:
                snapshot = json.loads(status.read_bytes())
                if snapshot.get("pid") == process.pid and float(snapshot.get("updated", 0)) >= since:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        raise RuntimeError(f"the watcher did not start: exit {process.poll()}")


def _log_lines(state: Path) -> tuple[list[dict[str, Any]], list[str]]:
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for name in ("activity-events.jsonl.1", "activity-events.jsonl"):
        path = state / name
        if not path.exists():
            continue
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            problems.append(f"{name} ends in a cut line: {data[-80:]!r}")
        for raw in data.splitlines():
            try:
                records.append(json.loads(raw))
            except ValueError:
                problems.append(f"{name}: a line that is not JSON: {raw[:120]!r}")
    return records, problems


def check(world: World) -> tuple[dict[str, Any], list[str]]:
    """The event log and the archive against the model."""
    records, problems = _log_lines(world.state)
    seen: dict[tuple[str, str, str], list[str | None]] = {}
    keys: dict[str, int] = {}
    keyless = 0
    for record in records:
        key = record.get("key")
        if not isinstance(key, str) or not key:
            keyless += 1
        else:
            keys[key] = keys.get(key, 0) + 1
        kind = record.get("kind")
        if kind not in ("prompt_submitted", "tool_executed"):
            continue
        session_id = str((record.get("session") or {}).get("id"))
        data = record.get("data") or {}
        text = data.get("detail") if kind == "prompt_submitted" else data.get("primary_arg")
        seen.setdefault((session_id, kind, str(text)), []).append(record.get("time"))
    if keyless:
        problems.append(f"{keyless} events without a key")
    twice = [k for k, n in keys.items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} keys logged more than once, e.g. {twice[:3]}")
    missing = [k for k in world.written if k not in seen]
    repeated = {k: v for k, v in seen.items() if len(v) > 1}
    unknown = [k for k in seen if k not in world.written]
    wrong_time = {
        k: (v[0], world.written[k])
        for k, v in seen.items()
        if k in world.written and v[0] != world.written[k]
    }
    if missing:
        problems.append(f"{len(missing)} of {len(world.written)} written never logged, e.g. {missing[:3]}")
    if repeated:
        problems.append(f"{len(repeated)} logged more than once, e.g. {list(repeated.items())[:3]}")
    if unknown:
        problems.append(f"{len(unknown)} logged that were never written, e.g. {unknown[:3]}")
    if wrong_time:
        problems.append(
            f"{len(wrong_time)} logged with another time (logged, written): {list(wrong_time.items())[:3]}"
        )
    archives = (
        sorted(p.name for p in (world.state / "archive").glob("*.json"))
        if (world.state / "archive").is_dir()
        else []
    )
    ends = [r for r in records if r.get("kind") == "session_end"]
    # A SessionEnd of a session the watcher already saw end (its next lines were read first: hook
    # records are read every half second, transcripts at once) ends nothing: at most one end each.
    causes = [str(r.get("key")).rsplit("/", 1)[0] for r in ends]
    if len(archives) != len(ends) or len(set(causes)) != len(ends) or len(ends) > world.ends:
        problems.append(
            f"{world.ends} session ends written, {len(ends)} session_end events logged "
            f"({len(set(causes))} different records), {len(archives)} archive files"
        )
    if world.ends and not ends:
        problems.append(f"{world.ends} session ends written, none logged")
    figures = {
        "written": len(world.written),
        "logged_events": len(records),
        "session_ends_written": world.ends,
        "session_ends_logged": len(ends),
        "archives": len(archives),
    }
    return figures, problems


def run(
    root: Path, kills: int, sessions: int = 6, seed: int = 18, alive: tuple[float, float] = (0.05, 1.0)
) -> tuple[dict[str, Any], list[str]]:
    """``kills`` rounds of: start the watcher, write while it runs, ``kill -9`` it after a random time
    (``alive`` seconds after it started); then a last run stopped with ``SIGTERM``, and :func:`check`."""
    rng = random.Random(seed)
    world = World(root, sessions, rng)
    for session_id in world.ids:
        stamp = _iso(time.time() - 3.0)
        text = f"prompt 0 of {session_id[:8]}"
        world.written[(session_id, "prompt_submitted", text)] = stamp
        world.path(session_id).write_bytes(world._line(session_id, "prompt", text, stamp))
    figures: dict[str, Any] = {"kills": 0, "exited_first": 0, "replays_dropped": 0}
    started = time.monotonic()
    for _ in range(kills):
        since = time.time()
        process = world.start_watcher()
        try:
            world.wait_started(process, since)
            deadline = time.monotonic() + rng.uniform(*alive)
            while time.monotonic() < deadline:
                world.step()
                time.sleep(rng.uniform(0.0, 0.01))
        finally:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                figures["kills"] += 1
            else:
                figures["exited_first"] += 1
            _, err = process.communicate(timeout=TIMEOUT)
        # What the event log dropped: events read again after a kill (the kill landed after the log
        # had them, before the cursors were saved).
        for dropped in re.finditer(rb"(\d+) events already logged", err):
            figures["replays_dropped"] += int(dropped.group(1))
        if process.returncode not in (-signal.SIGKILL, 0):
            return figures, [
                f"the watcher exited {process.returncode}: {err.decode(errors='replace')[-500:]}"
            ]
        # Written while no watcher runs: the next one must find it.
        for _ in range(rng.randint(0, 3)):
            world.step()
    # A last watcher, stopped cleanly once it has read everything.
    since = time.time()
    process = world.start_watcher()
    try:
        world.wait_started(process, since)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not world.all_read():
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=TIMEOUT)
    if process.returncode != 0:
        return figures, [
            f"the last watcher exited {process.returncode}: {err.decode(errors='replace')[-500:]}"
        ]
    figures["seconds"] = round(time.monotonic() - started, 1)
    found, problems = check(world)
    figures.update(found)
    return figures, problems


def soak(kills: int) -> int:
    """The kill phase of ``make soak`` (``SOAK_KILLS`` kills, 0: none): figures as one JSON object on
    stdout; 1 when a check failed."""
    if kills <= 0:
        return 0
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="sidelight-soak-kills-"))
    figures, problems = run(root, kills, sessions=12, seed=kills, alive=(0.05, 1.5))
    figures.update(root=str(root), problems=problems[:20], ok=not problems)
    sys.stdout.write(json.dumps({"kill_watch": figures}, indent=1) + "\n")
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(soak(int(sys.argv[1]) if len(sys.argv) > 1 else 25))
