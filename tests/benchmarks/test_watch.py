"""The watcher under load (issue 4): 1,000 sessions each appended to a few lines a second.

A writer process appends Claude-Code-shaped lines to every session's transcript (open, append, close,
as the agents do) at ``RATE`` lines a second per session for ``SECONDS``; a watcher process
(``sidelight.watch.watcher.Watcher`` with a lifecycle tracker, as ``sidelight watch`` runs it) follows
them. Both
are separate processes, so the watcher's own CPU time is its ``getrusage`` (every thread: watchdog, the
worker, the native scan's threads), sampled twice a second.

Reported in ``extra_info`` (never asserted, but for correctness):

- ``cpu_percent``: the watcher's CPU time over the writer's active window, in % of one core;
- ``latency_ms_p50`` / ``p99`` / ``max``: from a line's write (the writer's clock just after the write)
  to the end of the watcher's scan that read it (the worker's ``on_scan`` hook, same machine clock);
- ``lines_written`` / ``lines_counted``: every line counted exactly once (asserted equal);
- two peers: ``scan and count`` (the watcher without a lifecycle tracker: events, batched scans,
  cursors, counts, snapshot) and ``with lifecycle and sinks`` (as ``sidelight watch`` runs: every new
  line also goes through the tracker, and its events to the sink plugins); and ``scan and count, stat
  pass for appends`` (``Watcher(modify_events=False)``: watchdog reports only new, deleted and moved
  files, and a stat pass over the known transcripts every ``debounce`` finds the appends);
- ``with lifecycle and sinks, stat pass for appends, answering hooks``: as ``sidelight watch`` runs by
  default at this size, while a real ``sidelight hook claude-code`` of one of the sessions runs every
  half second (``hooks_fired``, ``hooks_answered_warm``, ``hook_ms_p50``; every one must be answered warm);
- ``appends_per_second`` actually reached, ``scans`` (batched native calls), ``backlog`` (the writes
  still unread when the writer stopped).

Targets from the issue: under 30% of one core at 5,000 appends a second over 1,000 files, p99 under
500 ms. Enabled (``--benchmark-enable``): 1,000 sessions x 5 lines/s for 60 s (``SIDELIGHT_BENCH_WATCH_*``
override); smoke mode: 20 sessions x 5 lines/s for 2 s.

Run a side alone: ``python -m tests.benchmarks.test_watch watcher HOME OUT`` / ``writer HOME ...``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = int(os.environ.get("SIDELIGHT_BENCH_WATCH_SESSIONS", "1000"))
SECONDS = float(os.environ.get("SIDELIGHT_BENCH_WATCH_SECONDS", "60"))
RATE = float(os.environ.get("SIDELIGHT_BENCH_WATCH_RATE", "5"))  # lines a second per session
_BENCH = "SIDELIGHT_BENCH_"
#: The watcher's ``debounce`` (its stat beat), when not its default.
DEBOUNCE = os.environ.get(f"{_BENCH}WATCH_DEBOUNCE")
#: Smoke mode: sessions, seconds, lines a second per session.
SMOKE = (20, 2.0, 5.0)
PROJECTS = 20
#: How long the watcher may take to catch up after the writer stops (a bound, not a measure).
CATCH_UP = 120.0


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _line(session: int, n: int, moment: float) -> str:
    """A realistic mix: prompts, assistant text, tool uses (edits, commands, reads) with results."""
    base: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": f"/work/p{session % PROJECTS}",
        "sessionId": f"s{session:05d}",
        "version": "2.1.330",
        "uuid": f"{session:05d}-{n:08d}",
        "timestamp": _stamp(moment),
    }
    kind = n % 5
    if kind == 0:
        base.update(type="user", message={"role": "user", "content": f"please do step {n}"})
    elif kind == 4:
        result = {"type": "tool_result", "tool_use_id": f"t{n - 1}", "content": "ok\n" * 20}
        base.update(type="user", message={"role": "user", "content": [result]})
    else:
        if kind == 1:
            block: dict[str, Any] = {"type": "text", "text": f"Working on step {n}. " * 4}
        elif kind == 2:
            arguments = {"file_path": f"/work/src/m{n % 17}.py", "old_string": "x = 1", "new_string": "x = 2"}
            block = {"type": "tool_use", "id": f"t{n}", "name": "Edit", "input": arguments}
        else:
            block = {
                "type": "tool_use",
                "id": f"t{n}",
                "name": "Bash",
                "input": {"command": f"pytest -k t{n}"},
            }
        base.update(
            type="assistant",
            message={"id": f"msg_{session}_{n}", "role": "assistant", "model": "m", "content": [block]},
        )
    return json.dumps(base, separators=(",", ":")) + "\n"


def _paths(home: Path, sessions: int) -> list[Path]:
    projects = home / ".claude" / "projects"
    return [projects / f"-work-p{i % PROJECTS}" / f"s{i:05d}.jsonl" for i in range(sessions)]


def _prepare(home: Path, sessions: int) -> list[Path]:
    paths = _paths(home, sessions)
    now = time.time()
    for i, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_line(i, 0, now), encoding="utf-8")
    return paths


# -- the two processes ------------------------------------------------------------------------------------


def run_watcher(
    home: Path, out: Path, lifecycle: bool, modify_events: bool = True, serve_hooks: bool = False
) -> None:
    """The watcher process: runs until SIGTERM, then writes its scans and CPU samples to ``out``.
    ``lifecycle``: with a tracker, whose events go to the sinks (the built-in JSONL event log);
    ``serve_hooks``: answering hooks on its socket, as ``sidelight watch`` does."""
    os.environ["HOME"] = str(home)
    os.environ["SIDELIGHT_STATE_DIR"] = str(home / "state")
    from sidelight.config import Settings
    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker
    from sidelight.plugins import Plugins
    from sidelight.watch.watcher import Watcher

    scans: list[tuple[float, list[tuple[str, int]]]] = []

    def on_scan(_now: float, offsets: Any) -> None:
        scans.append((time.time(), list(offsets)))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    samples: list[tuple[float, float]] = []

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    watcher = Watcher(
        Settings.load(),
        Plugins(entry_points=False),
        tracker=SessionTracker(LifecycleSettings()) if lifecycle else None,
        on_scan=on_scan,
        modify_events=modify_events,
        own_gc=True,  # as `sidelight watch` runs it
        serve_hooks=serve_hooks,
    )
    if DEBOUNCE:
        watcher.debounce = float(DEBOUNCE)
    watcher.start()
    (home / "watcher.ready").write_text("", encoding="utf-8")
    while not stop.wait(0.5):
        samples.append((time.time(), cpu()))
    samples.append((time.time(), cpu()))
    threads = _cpu_by_thread()
    watcher.stop()
    data = {
        "scans": scans,
        "samples": samples,
        "threads": threads,
        "error": None if watcher.error is None else str(watcher.error),
    }
    out.write_text(json.dumps(data), encoding="utf-8")


def _cpu_by_thread() -> dict[str, float]:
    """CPU seconds of each live thread of this process (Linux ``/proc``), by Python thread name; the
    native scan's threads are summed under ``native``."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    try:
        tasks = os.listdir("/proc/self/task")  # noqa: PTH208
    except OSError:
        return out
    for task in tasks:
        try:
            fields = Path(f"/proc/self/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        name = names.get(int(task), "native")
        out[name] = round(out.get(name, 0.0) + seconds, 2)
    return out


def run_writer(home: Path, sessions: int, seconds: float, rate: float, out: Path) -> None:
    """The writer process: ``rate`` lines a second to each of ``sessions`` transcripts for ``seconds``,
    spread evenly; records each write's file, offset after it and time."""
    paths = [str(p) for p in _paths(home, sessions)]
    sizes = [Path(p).stat().st_size for p in paths]
    counters = [1] * sessions
    writes: list[tuple[int, int, float]] = []
    tick = 0.01
    per_tick = sessions * rate * tick
    owed = 0.0
    cursor = 0
    start = time.time()
    next_tick = start
    while True:
        now = time.time()
        if now - start >= seconds:
            break
        owed += per_tick
        while owed >= 1:
            i = cursor % sessions
            cursor += 1
            owed -= 1
            line = _line(i, counters[i], time.time()).encode()
            counters[i] += 1
            fd = os.open(paths[i], os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            sizes[i] += len(line)
            writes.append((i, sizes[i], time.time()))
        next_tick += tick
        delay = next_tick - time.time()
        if delay > 0:
            time.sleep(delay)
    end = time.time()
    out.write_text(json.dumps({"start": start, "end": end, "writes": writes}), encoding="utf-8")


# -- the benchmark ----------------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _latencies(paths: list[Path], writes: list[list[Any]], scans: list[list[Any]]) -> tuple[list[float], int]:
    """For each write, the time until the first scan that reached its offset; and the writes never read."""
    index = {str(p): i for i, p in enumerate(paths)}
    reached: dict[int, list[tuple[float, int]]] = {}
    for moment, offsets in scans:
        for path, offset in offsets:
            i = index.get(path)
            if i is not None:
                reached.setdefault(i, []).append((moment, offset))
    by_file: dict[int, list[tuple[int, float]]] = {}
    for i, offset, moment in writes:
        by_file.setdefault(i, []).append((offset, moment))
    latencies: list[float] = []
    unread = 0
    for i, file_writes in by_file.items():
        seen = reached.get(i, [])
        k = 0
        for offset, moment in file_writes:
            while k < len(seen) and seen[k][1] < offset:
                k += 1
            if k == len(seen):
                unread += 1
                continue
            latencies.append(max(0.0, seen[k][0] - moment))
    return latencies, unread


def _env(home: Path) -> dict[str, str]:
    # The benchmark's own settings reach the watcher; the user's sidelight settings do not.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_") or k.startswith(_BENCH)}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), PYTHONPATH=str(ROOT))
    return env


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


def _counted(home: Path) -> int:
    try:
        data = json.loads((home / "state" / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return sum(int(row.get("lines") or 0) for row in data.get("sessions") or ())


#: Peer -> the watcher process's mode.
PEERS = {
    "scan and count": "core",
    "scan and count, stat pass for appends": "core-stat",
    "with lifecycle and sinks": "lifecycle",
    "with lifecycle and sinks, stat pass for appends": "lifecycle-stat",
    "with lifecycle and sinks, stat pass for appends, answering hooks": "lifecycle-stat-serve",
}
#: While the writer runs, a prompt hook of one of the sessions every this many seconds (the serving peer).
HOOK_EVERY = 0.5


def _fire_hooks(home: Path, paths: list[Path], stop: threading.Event, took: list[tuple[float, bool]]) -> None:
    """Real `sidelight hook claude-code` processes, one every :data:`HOOK_EVERY`, each for another session;
    ``took``: each one's wall time and whether it printed a digest or nothing (valid either way)."""
    env = {**_env(home), "SIDELIGHT_WARM_TIMEOUT": "1s"}
    command = [sys.executable, "-m", "sidelight", "hook", "claude-code"]
    n = 0
    while not stop.wait(HOOK_EVERY):
        path = paths[(n * 37) % len(paths)]
        n += 1
        payload = {
            "session_id": path.stem,
            "transcript_path": str(path),
            "cwd": "/work/" + path.parent.name.removeprefix("-work-"),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "what did the others do?",
        }
        began = time.monotonic()
        done = subprocess.run(
            command, input=json.dumps(payload).encode(), capture_output=True, env=env, check=False
        )
        took.append(
            (
                time.monotonic() - began,
                done.returncode == 0 and (not done.stdout or b"additionalContext" in done.stdout),
            )
        )


def _answered(home: Path) -> int:
    try:
        data = json.loads((home / "state" / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return int((data.get("hooks") or {}).get("answered", -1))


@pytest.mark.benchmark(group="watch")
@pytest.mark.parametrize("peer", list(PEERS))
def test_watcher_keeps_up(benchmark, benchmarks_enabled, tmp_path, peer):
    mode = PEERS[peer]
    if benchmarks_enabled:
        sessions, seconds, rate = SESSIONS, SECONDS, RATE
    else:
        sessions, seconds, rate = SMOKE
    home = tmp_path / "home"
    paths = _prepare(home, sessions)
    watcher_out, writer_out = tmp_path / "watcher.json", tmp_path / "writer.json"
    here = [sys.executable, "-m", "tests.benchmarks.test_watch"]
    result: dict[str, Any] = {}
    hooks: list[tuple[float, bool]] = []

    def run() -> None:
        with subprocess.Popen(
            [*here, "watcher", str(home), str(watcher_out), mode],
            env=_env(home),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ) as watcher:
            try:
                _wait(
                    lambda: (home / "watcher.ready").exists() or watcher.poll() is not None, 60, "the watcher"
                )
                _wait(lambda: _counted(home) == sessions, 60, "the first look at every session")
                firing = threading.Event()
                firer = threading.Thread(target=_fire_hooks, args=(home, paths, firing, hooks))
                if mode.endswith("-serve"):
                    firer.start()
                try:
                    subprocess.run(
                        [*here, "writer", str(home), str(sessions), str(seconds), str(rate), str(writer_out)],
                        env=_env(home),
                        cwd=ROOT,
                        check=True,
                        timeout=seconds + 120,
                    )
                finally:
                    firing.set()
                    if firer.is_alive():
                        firer.join(120)
                written = len(json.loads(writer_out.read_text(encoding="utf-8"))["writes"])
                _wait(lambda: _counted(home) >= sessions + written, CATCH_UP, "the watcher to catch up")
                if hooks:
                    _wait(lambda: _answered(home) >= len(hooks), 30, "the watcher to count its hooks")
                    result["answered"] = _answered(home)
                watcher.send_signal(signal.SIGTERM)
                _out, err = watcher.communicate(timeout=60)
            finally:
                if watcher.poll() is None:
                    watcher.kill()
        assert watcher.returncode == 0, err
        result["counted"] = _counted(home)

    benchmark.pedantic(run, rounds=1, iterations=1)

    writer = json.loads(writer_out.read_text(encoding="utf-8"))
    watched = json.loads(watcher_out.read_text(encoding="utf-8"))
    writes, scans, samples = writer["writes"], watched["scans"], watched["samples"]
    lines_written = sessions + len(writes)  # the first line of each file, then the appended ones
    latencies, unread = _latencies(paths, writes, scans)
    start, end = writer["start"], writer["end"]
    window = [(t, c) for t, c in samples if start <= t <= end]
    cpu_percent = (
        100.0 * (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) if len(window) >= 2 else None
    )
    info = {
        "peer": peer,
        "sessions": sessions,
        "seconds": seconds,
        "rate_per_session": rate,
        "appends_per_second": round(len(writes) / max(end - start, 1e-9), 1),
        "lines_written": lines_written,
        "lines_counted": result["counted"],
        "cpu_percent": None if cpu_percent is None else round(cpu_percent, 1),
        "latency_ms_p50": round(1000 * _percentile(latencies, 0.50), 1),
        "latency_ms_p99": round(1000 * _percentile(latencies, 0.99), 1),
        "latency_ms_max": round(1000 * max(latencies, default=float("nan")), 1),
        "scans": len(scans),
        "backlog": unread,
        "targets": "cpu_percent < 30 at 5,000 appends/s over 1,000 files; latency_ms_p99 < 500",
        "cpu_seconds_by_thread": watched["threads"],
        "watcher_error": watched["error"],
    }
    if hooks:
        times = sorted(t for t, _ok in hooks)
        info.update(
            hooks_fired=len(hooks),
            hooks_answered_warm=result.get("answered"),
            hook_ms_p50=round(1000 * _percentile(times, 0.50), 1),
            hook_ms_max=round(1000 * times[-1], 1),
        )
    benchmark.extra_info.update(info)
    sys.stderr.write(f"\nwatcher benchmark: {json.dumps(info)}\n")
    assert result["counted"] == lines_written, "every line counted exactly once"
    assert unread == 0
    assert watched["error"] is None
    if hooks:
        assert all(ok for _t, ok in hooks), "every hook printed a digest or nothing"
        assert result.get("answered") == len(hooks), "every hook answered by the watcher"


if __name__ == "__main__":
    role, home_arg, *rest = sys.argv[1:]
    if role == "watcher":
        mode = rest[1] if len(rest) > 1 else "lifecycle"
        run_watcher(
            Path(home_arg),
            Path(rest[0]),
            mode.startswith("lifecycle"),
            modify_events="-stat" not in mode,
            serve_hooks=mode.endswith("-serve"),
        )
    elif role == "writer":
        run_writer(Path(home_arg), int(rest[0]), float(rest[1]), float(rest[2]), Path(rest[3]))
    else:
        raise SystemExit(f"unknown role {role!r}")
