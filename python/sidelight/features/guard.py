"""The stale-write guard: a write tool is stopped once when another session changed its file since this
session last read or wrote it (docs/guard.md).

A host's before-tool hook (Claude Code ``PreToolUse`` on ``Write|Edit|MultiEdit|NotebookEdit``, Codex
``PreToolUse`` on ``apply_patch``) reaches :func:`check_write` through the hook's composer
(:mod:`sidelight.features.hook`). It reads where the write goes from the tool's input (a path argument,
or the paths of a Codex patch: :func:`patch_paths`), then, from the transcripts only:

* this session's last read or write of each file (a tool call that ran: its result is there and is no
  error), else the session's start: the tail of its own transcript;
* the siblings' changes of that file since then: only siblings whose transcript was written after that
  moment (one ``stat`` each), and of those only the tail (at most ``first_look_bytes``).

The latest such change not refused before is the answer: with ``edit_guard = refuse-once`` a refusal
(the host's deny), with ``inform`` a note that goes with the tool's result. What was refused is kept per
session (``<state dir>/guard/SESSION.json``) once the refusal was delivered, so the same write tried again
goes through. Whatever goes wrong, the write is let through (the composer logs it).
"""

from __future__ import annotations

import os
import time

from sidelight import _core
from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.formats import DEFAULT_MAX_LINE_BYTES
from sidelight.statefile import private_dir, write_atomic
from sidelight.statelayout import GUARD_DIR, session_path
from sidelight.timestamps import epoch_seconds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import Any, Final

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, Session

__all__ = [
    "Change",
    "Verdict",
    "check_write",
    "describe",
    "patch_paths",
    "real_path",
    "record_verdict",
    "sibling_changes",
    "tool_calls",
    "tool_paths",
]

logger = get_logger(__name__)

#: The keys of a write tool's input that name its file (Claude Code, Gemini, Qwen, Pi, Copilot, opencode).
PATH_KEYS: Final = ("file_path", "notebook_path", "path", "filePath")
#: The keys of a tool's input that may hold a patch (Codex's ``apply_patch``: ``command`` in a hook's
#: input, the custom tool's text in its transcript).
PATCH_KEYS: Final = ("command", "input", "patch")
#: The lines of a patch that name a file, and how the file is named after them.
PATCH_BEGIN: Final = "*** Begin Patch"
PATCH_FILE_LINES: Final = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
#: Refusals a session remembers (the oldest are forgotten first).
LEDGER_KEPT: Final = 256
#: How much of a tool input's text is read from a transcript (a patch's file lines may come late).
TEXT_LIMIT: Final = 1 << 20
#: How much of a sibling's tail is read first (see :func:`_tail_start`).
FIRST_WINDOW: Final = 64 << 10
#: How many entries one native read returns.
CHUNK_ENTRIES: Final = 2000
#: How much of a shell command a refusal quotes.
COMMAND_CHARS: Final = 80


class Verdict:
    """What the guard says of one write: ``refuse`` it (else let it through with ``text`` as a note),
    the line the model receives, and the ledger ``keys`` recorded once the answer is delivered."""

    __slots__ = ("keys", "ledger", "refuse", "text")

    def __init__(self, refuse: bool, text: str, keys: Sequence[str], ledger: str) -> None:
        self.refuse = refuse
        self.text = text
        self.keys = tuple(keys)
        self.ledger = ledger

    def __repr__(self) -> str:
        return f"Verdict(refuse={self.refuse!r}, text={self.text!r})"


class Change:
    """A sibling's change of one file: when, who, and how (a tool's name or a shell command)."""

    __slots__ = ("command", "path", "session", "time", "tool")

    def __init__(self, path: str, when: float, session: Session, tool: str, command: str | None) -> None:
        self.path = path
        self.time = when
        self.session = session
        self.tool = tool
        self.command = command


# --- where a write goes ---------------------------------------------------------------------------------


def patch_paths(text: str) -> list[str]:
    """The files a Codex patch adds, updates, deletes or moves to, as written (relative to the cwd);
    empty when ``text`` is no patch (it does not start with ``*** Begin Patch``)."""
    if not isinstance(text, str) or not text.lstrip().startswith(PATCH_BEGIN):
        return []
    found: dict[str, None] = {}
    for line in text.splitlines():
        for head in PATCH_FILE_LINES:
            if line.startswith(head):
                name = line[len(head) :].strip()
                if name:
                    found[name] = None
                break
    return list(found)


def tool_paths(args: object) -> list[str]:
    """The files a tool's input names: its path argument (:data:`PATH_KEYS`), else the files of a
    patch it carries (a mapping's :data:`PATCH_KEYS`, or the input itself when it is text)."""
    if isinstance(args, str):
        return patch_paths(args)
    if not isinstance(args, dict):
        return []
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return [value]
    for key in PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return patch_paths(value)
    return []


def real_path(path: str, cwd: str | None) -> str | None:
    """``path`` absolute (from ``cwd`` when relative) with its links resolved; ``None``: cannot tell."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(cwd, path)
    return os.path.realpath(path)


# --- the check ------------------------------------------------------------------------------------------


def check_write(
    event: HostEvent, settings: Settings, plugins: Plugins, *, can_refuse: bool = True
) -> Verdict | None:
    """What the guard says of the write ``event`` (a before-tool event of a write tool) is about to make
    (``None``: nothing, let it through). ``can_refuse``: the host can stop the tool (else a stale write
    gets a note, as with ``edit_guard = inform``). Raises on internal errors (the composer fails open)."""
    mode = settings.edit_guard
    if mode == "off":
        return None
    refuse = mode == "refuse-once" and can_refuse
    cwd = os.fspath(event.cwd) if event.cwd is not None else None
    wanted = {
        real: name
        for name in tool_paths(event.raw.get("tool_input"))
        if (real := real_path(name, cwd)) is not None
    }
    if not wanted:
        return None
    from sidelight.engine.discovery import current_session, list_sessions, listed_once, siblings_of
    from sidelight.engine.reads import decoder_for

    with listed_once(settings, plugins):
        session = current_session(event, settings, plugins)
        if session is None:
            return None
        since, touched = _own_touches(session, decoder_for(session, plugins), wanted, cwd, settings, plugins)
        if not since:
            return None
        oldest = min(since.values())
        siblings = siblings_of(session, list_sessions(settings, plugins), settings.scope)
        changes = sibling_changes(siblings, since, oldest, settings, plugins)
    if not changes:
        return None
    ledger = os.fspath(session_path(settings.state_dir, GUARD_DIR, session.key, ".json"))
    refused = set(_read_ledger(ledger))
    fresh = [c for c in changes if _key(c) not in refused]
    if not fresh:
        return None
    latest = max(fresh, key=lambda c: c.time)
    text = _line(latest, wanted[latest.path], cwd, latest.path in touched, refuse)
    return Verdict(refuse, text, [_key(c) for c in fresh], ledger)


def _own_touches(
    session: Session,
    decoder: str,
    wanted: Mapping[str, str],
    cwd: str | None,
    settings: Settings,
    plugins: Plugins,
) -> tuple[dict[str, float], set[str]]:
    """Per wanted file, when this session last read or wrote it (a call that ran), else when it started
    (its transcript's first time; empty when it says none); and the files it read or wrote. Only the
    tail is read: of a longer transcript, a file not touched in the tail counts from the tail's first
    call (it may have been read before: a change before then is not held against it)."""
    path = os.fspath(session.path)
    last: dict[str, float] = {}
    first: float | None = None
    try:
        whole = _core.tail_offset(path, settings.first_look_bytes) == 0
        head = _head_time(path) if whole else None
        for when, _name, _kind, paths, command, _cwd in tool_calls(
            path, decoder, settings, plugins, cwd or session.directory
        ):
            if when is None:
                continue
            if first is None:
                first = when
            for real in paths:
                if real in wanted:
                    last[real] = when
            if command is not None:
                for real, name in wanted.items():
                    if _names(command, real, name):
                        last[real] = when  # a command that names the file: it read it, at least
    except OSError:
        return {}, set()  # no transcript yet: nothing it could have missed
    start = head if head is not None else first
    if start is None:
        return {}, set()
    return {real: last.get(real, start) for real in wanted}, set(last)


def _head_time(path: str) -> float | None:
    from sidelight.engine.paths import head_string_field

    return epoch_seconds(head_string_field(path, "timestamp"))


def _names(command: str, real: str, name: str) -> bool:
    """Whether a shell command names the file (its path as given, its full path, or its base name): this
    session's command that names it has seen it (a loose test, on the side of refusing less)."""
    base = os.path.basename(real)
    return real in command or name in command or (bool(base) and base in command)


def sibling_changes(
    siblings: Iterable[Session],
    since: Mapping[str, float],
    oldest: float,
    settings: Settings,
    plugins: Plugins,
) -> list[Change]:
    """The siblings' changes of the wanted files after this session's last touch of each."""
    from sidelight.engine.reads import decoder_for

    out: list[Change] = []
    for sibling in siblings:
        for path in (sibling.path, *sibling.extra_paths):
            name = os.fspath(path)
            try:
                if os.stat(name).st_mtime <= oldest:
                    continue
            except OSError:
                continue
            try:
                decoder = decoder_for(sibling, plugins)
                out.extend(_sibling_changes(sibling, name, decoder, since, settings, plugins))
            except Exception as error:  # one unreadable sibling never hides the others
                logger.debug("guard: skipping %s: %s", name, error)
    return out


def _sibling_changes(
    sibling: Session,
    path: str,
    decoder: str,
    since: Mapping[str, float],
    settings: Settings,
    plugins: Plugins,
) -> Iterator[Change]:
    from sidelight.commands import written_files

    names = {os.path.basename(real) for real in since}
    calls = tool_calls(path, decoder, settings, plugins, sibling.directory, after=min(since.values()))
    for when, name, kind, paths, command, cwd in calls:
        if when is None:
            continue
        if kind == "edit":
            for real in paths:
                if real in since and when > since[real]:
                    yield Change(real, when, sibling, name, None)
        elif command is not None and any(n in command for n in names):  # parsed only when it may be
            for written in written_files(command):
                target = real_path(written, cwd)
                if target is not None and target in since and when > since[target]:
                    yield Change(target, when, sibling, name, command)


def tool_calls(
    path: str,
    decoder: str,
    settings: Settings,
    plugins: Plugins,
    cwd: str | None,
    *,
    after: float | None = None,
) -> Iterator[tuple[float | None, str, str, list[str], str | None, str | None]]:
    """The tool calls of the tail of a transcript that ran (their result is there and no error), in
    order: ``(when, tool, category, files it read or changed, its shell command, the directory it ran
    in)``; ``when`` is its result's time (else the call's). The tail is ``first_look_bytes`` long; with
    ``after`` (a time), no longer than it takes to reach back to that time (:func:`_tail_start`)."""
    from sidelight.engine.reads import category_tables

    categories = category_tables(plugins, [decoder]).get(decoder, {})
    start = _tail_start(path, decoder, settings.first_look_bytes, after)
    size = os.stat(path).st_size
    calls: dict[int | None, tuple[float | None, str, str, list[str], str | None, str | None]] = {}
    order: list[int | None] = []
    read = _core.read_entries
    while start < size:
        entries, after, *_ = read(
            path, decoder, start, CHUNK_ENTRIES, 4 << 20, DEFAULT_MAX_LINE_BYTES, TEXT_LIMIT, 0
        )
        for kind, stamp, ident, name, text, data, is_error, _lines in entries:
            if kind == "cwd" and text:
                cwd = text
            elif kind == "tool" and name:
                category = categories.get(name.lower(), "other")
                args: Any = text
                if data:
                    try:
                        args = jsonio.loads(data)
                    except ValueError:
                        args = None
                files = [r for f in tool_paths(args) if (r := real_path(f, cwd)) is not None]
                command = None
                if category == "command" and isinstance(args, dict):
                    value = args.get("command", args.get("cmd"))
                    command = value if isinstance(value, str) else None
                    if isinstance(value, list):
                        command = " ".join(str(v) for v in value)
                calls[ident] = (epoch_seconds(stamp), name, category, files, command, cwd)
                order.append(ident)
            elif kind == "result":
                if ident is None and order:  # a result without an id: the call just before it
                    ident = order[-1]
                call = calls.pop(ident, None)  # (a call before the tail: not known, not counted)
                if call is not None and not is_error:
                    when = epoch_seconds(stamp)
                    yield (when if when is not None else call[0], *call[1:])
        if after <= start:
            break
        start = after


def _tail_start(path: str, decoder: str, limit: int, after: float | None) -> int:
    """Where to read ``path``'s tail from: the last ``limit`` bytes; with ``after``, the last
    :data:`FIRST_WINDOW` bytes, or four times as many while its first line is still later than
    ``after`` (a sibling's tail since this session's last look costs what was written since)."""
    window = FIRST_WINDOW
    while after is not None and window < limit:
        start = _core.tail_offset(path, window)
        if start == 0:
            return 0
        first = _core.read_entries(path, decoder, start, 1, 1 << 16, DEFAULT_MAX_LINE_BYTES, 0, 0)[4]
        when = epoch_seconds(first)
        if when is not None and when <= after:
            return start
        window *= 4
    return _core.tail_offset(path, limit)


# --- the answer -------------------------------------------------------------------------------------------


def _key(change: Change) -> str:
    return f"{change.path}\0{change.session.key}\0{change.time!r}"


def describe(change: Change, commands: int = COMMAND_CHARS) -> tuple[str, str]:
    """How a sibling's change is told: ``("edited by AGENT session NAME", "3m ago")`` (``written by``,
    ``changed by ... with `COMMAND` `` with the command cut to ``commands`` characters)."""
    from sidelight.features.digest import ago
    from sidelight.redact import sanitize

    other = change.session
    who = f"{other.agent} session {sanitize(other.name, 60)}"
    if other.id and not other.name.startswith(other.id[:8]):
        who += f" ({other.id[:8]})"
    if change.command is not None:
        did = f"changed by {who} with `{sanitize(change.command, commands)}`"
    elif change.tool.lower() in ("write", "write_file", "create"):
        did = f"written by {who}"
    else:
        did = f"edited by {who}"
    return did, ago(max(time.time() - change.time, 0.0))


def _line(change: Change, name: str, cwd: str | None, touched: bool, refuse: bool) -> str:
    """The one line the model receives: which file, who changed it, how and when, and the way on."""
    from sidelight.features.digest import short_path
    from sidelight.redact import sanitize

    did, when = describe(change)
    since = "this session last read or wrote it" if touched else "this session started (it has not read it)"
    shown = sanitize(short_path(name, cwd), 200)
    if refuse:
        return (
            f"sidelight stopped this write once: {shown} was {did} {when}, after {since}. Re-read "
            f"{shown} first and keep that change; retrying this write as is will go through"
        )  # no full stop: Codex adds ". Command: <patch>" after it
    return (
        f"sidelight: {shown} was {did} {when}, after {since}; this write went through. Re-read "
        f"{shown} to check that change is still there."
    )


def _read_ledger(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = jsonio.loads(f.read())
    except (OSError, ValueError):
        return []
    return [k for k in data if isinstance(k, str)] if isinstance(data, list) else []


def record_verdict(verdict: Verdict) -> None:
    """Remembers the changes ``verdict`` refused a write for (or noted), so that the same write tried
    again goes through and nothing is said twice (called once the answer was delivered)."""
    from pathlib import Path

    kept = [k for k in _read_ledger(verdict.ledger) if k not in verdict.keys] + list(verdict.keys)
    path = Path(verdict.ledger)
    private_dir(path.parent)
    # Not durable (no fsync: milliseconds before a tool runs): a machine that loses power may forget
    # the last refusal, and the retry is refused once more.
    write_atomic(path, jsonio.dumps(kept[-LEDGER_KEPT:]).encode("utf-8"), durable=False)
