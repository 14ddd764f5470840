"""A real ``sidelight watch`` for tests and benchmarks of the warm path: started, waited for until it
answers hooks, asked what its snapshot counts, stopped."""

from __future__ import annotations

import json
import subprocess
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path


def snapshot(state_dir: Path) -> dict[str, Any]:
    """The watcher's ``status.json`` (``{}`` before its first one)."""
    try:
        data: dict[str, Any] = json.loads((state_dir / "status.json").read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data


def start_serving(
    command: Sequence[str], env: Mapping[str, str], cwd: Path, state_dir: Path, *, timeout: float = 120
) -> subprocess.Popen[bytes]:
    """``command`` (a ``sidelight watch``) once its snapshot says it answers hooks: it binds its socket
    before its first pass and writes its first snapshot after it, so the sessions are listed by then."""
    watcher = subprocess.Popen(
        list(command), env=dict(env), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and watcher.poll() is None:
        if "hooks" in snapshot(state_dir):
            return watcher
        time.sleep(0.05)
    watcher.kill()
    raise AssertionError(
        f"the watcher did not start answering hooks: {watcher.communicate()[1].decode()[-2000:]}"
    )


def answered(state_dir: Path, at_least: int, timeout: float = 30) -> int:
    """How many hooks the watcher's snapshot says it answered, once it says at least ``at_least`` (its
    snapshot is written within a second or two of an answer) or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while True:
        count = int(snapshot(state_dir).get("hooks", {}).get("answered", 0))
        if count >= at_least or time.monotonic() >= deadline:
            return count
        time.sleep(0.1)


def stop(watcher: subprocess.Popen[bytes]) -> bytes:
    """SIGTERM, then what it said on stderr."""
    watcher.terminate()
    _out, errors = watcher.communicate(timeout=60)
    return errors
