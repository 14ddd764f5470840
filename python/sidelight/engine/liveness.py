"""Whether a session's process still runs, from the registry its host keeps of its running sessions.

Claude Code writes ``~/.claude/sessions/<pid>.json`` while a session runs (and removes it when the
process exits), Qwen Code ``~/.qwen/sessions/<pid>.json``: each names the process (its pid, and its
start time as ``/proc/<pid>/stat`` gives it) and the session it runs. An agent reads its own registry
(:attr:`sidelight.records.AgentSpec.live_sessions`) with the helpers here:

- :func:`registry_records`: the registry's records, each file read only when it is a small regular file
  (a symlink, a FIFO, a huge or garbled file is skipped: unknown, never an error);
- :func:`same_process`: whether a pid is still the process that wrote the record (``True``), is gone
  (``False``: no such pid, or a pid now used by another program, told by its start time), or cannot be
  told (``None``);
- :func:`session_liveness`: every agent's answer in one mapping, for a consumer that needs it
  (``sidelight status``, the dashboard, the handoff). A prompt's digest never asks.

A session with no record is unknown: its state is judged from its files' times, as without a registry.
"""

from __future__ import annotations

import os
import stat

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import read_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from typing import Any, Final

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import AgentSpec, Liveness

__all__ = [
    "GONE",
    "MAX_RECORD_BYTES",
    "RUNNING",
    "boot_id",
    "is_foreign",
    "judge_record",
    "machine_id",
    "parent_pid",
    "pid_namespace",
    "process_start",
    "registry_records",
    "registry_session",
    "same_process",
    "session_liveness",
]

logger = get_logger(__name__)

#: A session whose registry record names a process that still runs.
RUNNING: Final = "running"
#: A session whose registry record names a process that is gone (dead, or its pid now another's).
GONE: Final = "gone"

#: A registry file larger than this is not read (the hosts' records are a few hundred bytes).
MAX_RECORD_BYTES: Final = 64 * 1024

_PROC = "/proc"


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``'s 22nd field, what
    Claude Code records as ``procStart``); ``None``: no such process, or no ``/proc`` to tell."""
    return _stat_field(pid, 19)


def _stat_field(pid: int, index: int) -> int | None:
    """A number of ``/proc/<pid>/stat``, counted from the field after the command name (0: the state);
    ``None``: no such process, no ``/proc``, or no such number."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as file:  # noqa: PTH123 (os.path where a hook is cold)
            data = file.read(4096)
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    fields = data[data.rfind(b")") + 1 :].split()
    try:
        return int(fields[index])
    except (IndexError, ValueError):
        return None


def parent_pid(pid: int) -> int | None:
    """The parent of process ``pid`` (``/proc/<pid>/stat``'s 4th field); ``None``: no such process, or
    no ``/proc`` to tell."""
    parent = _stat_field(pid, 1)
    return parent if parent is not None and parent > 0 else None


def registry_session(folder: str | os.PathLike[str], pid: int) -> str | None:
    """The session id the registry ``folder`` (``~/.claude/sessions``) records for the running process
    ``pid`` (its ``<pid>.json``: a small regular file naming that pid and a ``sessionId``, whose
    ``procStart``, when given, is the process's start); ``None``: no record, or one that does not hold."""
    path = os.path.join(folder, f"{pid}.json")  # noqa: PTH118 (os.path where a hook is cold)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a link, a FIFO: not a record
            return None
    except OSError:
        return None
    data = read_head(path, MAX_RECORD_BYTES + 1)
    if not data or len(data) > MAX_RECORD_BYTES:
        return None
    try:
        record = jsonio.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict) or record.get("pid") != pid:
        return None
    session_id = record.get("sessionId")
    start = record.get("procStart")
    started = int(start) if isinstance(start, str) and start.isdigit() and start.isascii() else None
    if not isinstance(session_id, str) or not session_id or same_process(pid, started) is False:
        return None
    return session_id


def same_process(pid: int, start: int | None) -> bool | None:
    """Whether ``pid`` is still the process that started at ``start`` (clock ticks since boot, as
    :func:`process_start` gives it; ``None``: the record did not say): ``False`` when no process has
    that pid, or one does that started at another time (the pid was reused); ``True`` when it runs
    (and started then, where that can be told); ``None`` when it cannot be told."""
    if pid <= 0 or pid > 1 << 22:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, and is another user's
    except (OSError, OverflowError, ValueError):
        return None
    if start is None:
        return True
    found = process_start(pid)
    if found is None:
        # No /proc (macOS, BSD): alive is all that can be told. With one, the process exited since, or
        # its entry is hidden (hidepid): not told.
        return None if os.path.isdir(_PROC) else True  # noqa: PTH112 (os.path: a hook may be cold)
    return found == start


def pid_namespace() -> int | None:
    """This process's pid namespace (the inode of ``/proc/self/ns/pid``; ``None``: unknown). A record
    written in another namespace (a container) names a pid this process cannot check."""
    try:
        return os.stat(f"{_PROC}/self/ns/pid").st_ino  # noqa: PTH116
    except OSError:
        return None


def machine_id() -> str | None:
    """This machine's id (``/etc/machine-id``; ``None``: unknown): a registry in a home folder shared
    with another machine names that machine's pids."""
    return _first_line("/etc/machine-id")


def boot_id() -> str | None:
    """This boot's id (``/proc/sys/kernel/random/boot_id``; ``None``: unknown)."""
    return _first_line(f"{_PROC}/sys/kernel/random/boot_id")


def is_foreign(machine: object = None, boot: object = None, namespace: object = None) -> bool:
    """Whether a record names a process of another machine, boot or pid namespace than this one (its
    pid is then not one this process can check): each given part (``None``: not said) is compared with
    this process's own (:func:`machine_id`, :func:`boot_id`, :func:`pid_namespace`), where that is
    known."""
    for theirs, ours in ((machine, machine_id), (boot, boot_id), (namespace, pid_namespace)):
        if theirs is None or theirs == "":
            continue
        own = ours()
        if own is not None and str(theirs) != str(own):
            return True
    return False


def _first_line(path: str) -> str | None:
    line = read_head(path, 256).strip().decode("ascii", "replace")
    return line or None


def registry_records(folder: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a host's registry ``folder``: for each ``<pid>.json`` (or ``<pid>-<slot>.json``)
    that is a regular file (not a link) of at most :data:`MAX_RECORD_BYTES` holding a JSON object, the
    pid its name says and the object. Anything else is skipped; a missing folder has none."""
    try:
        with os.scandir(folder) as entries:
            found = [(e.name, e.path) for e in entries if _is_record(e)]
    except OSError:
        return
    for name, path in found:
        pid = name[:-5].split("-", 1)[0]
        if not pid.isdigit() or not pid.isascii():
            continue
        data = read_head(path, MAX_RECORD_BYTES + 1)
        if not data or len(data) > MAX_RECORD_BYTES:
            continue
        try:
            record = jsonio.loads(data)
        except (ValueError, UnicodeDecodeError):
            logger.debug("skipping the registry record %s: not JSON", path)
            continue
        if isinstance(record, dict):
            yield int(pid), record


def _is_record(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.name.endswith(".json") and entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def judge_record(pid: int, record: Mapping[str, Any], start: int | None, live: dict[str, Liveness]) -> None:
    """Adds one registry record's session to ``live`` (by its ``sessionId``, lower case): running when
    its ``pid`` (which must be the one its file is named by) is still the process that started at
    ``start``, gone when it is not; a record that names no session, or another pid, adds nothing. A
    session some record says runs stays running (a resumed session: its old process's record, left by
    a crash, says gone)."""
    session_id = record.get("sessionId")
    if not isinstance(session_id, str) or not session_id or record.get("pid") != pid:
        return
    alive = same_process(pid, start)
    if alive is None:
        return
    key = session_id.lower()
    if alive:
        live[key] = RUNNING
    else:
        live.setdefault(key, GONE)


def session_liveness(
    settings: Settings, plugins: Plugins, agents: Iterable[AgentSpec] | None = None
) -> dict[str, Liveness]:
    """Per session id (lower case), whether its process runs, as the ``agents`` (by default every one)
    that keep a registry say (:attr:`sidelight.records.AgentSpec.live_sessions`). A session no registry
    names is not in it. An agent's failure costs only its own answers (logged)."""
    live: dict[str, Liveness] = {}
    for agent in plugins.agents().values() if agents is None else agents:
        if agent.live_sessions is None:
            continue
        try:
            found = agent.live_sessions(settings)
        except Exception as error:  # a plugin's registry reader must not break status
            logger.info("cannot read the running sessions of %s: %s", agent.name, error)
            continue
        for session_id, state in found.items():
            if state == RUNNING or live.get(session_id.lower()) != RUNNING:
                live[session_id.lower()] = state
    return live
