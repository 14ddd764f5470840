"""The cursor store: where each reader session stopped reading each of its sibling (writer) sessions.

One JSON file holds every cursor, in the shape the seed tool wrote::

    {"main": {"discord": {"offset": 1234}}}
     reader    writer     entry

An entry is a JSON object with at least a non-negative integer ``offset``. sidelight stores there the
fields of :meth:`sidelight.Cursor.as_dict` (``offset``, ``dev``, ``inode``, ``head_len``, ``head_hash``,
``tail_hash``, ``last_message``) and, for a session with more than one file (subagents), an ``"extra"``
object mapping each further path to its own cursor dict. The store interprets nothing but ``offset``:
any other JSON value in an entry is kept as given, and an old file with bare offsets loads as it is.
A reader may keep an entry for itself (writer = reader): the digest's holds the reader's cursor into
its own transcript, ``"files"``, the paths it edited, wrote or read (for conflicts first), and
``"waiting"``, the siblings a digest had no room for, each with the number of prompts it has waited.

Safety, for many hooks running at once:

* :meth:`CursorStore.update` is a read-modify-write under an exclusive ``fcntl.flock`` on the sibling
  file ``PATH.lock``: it replaces only the writers it is given, so concurrent hooks never lose each
  other's updates.
* :meth:`CursorStore.reading` is a second lock, one per reader (``PATH.<hash of the reader>.reading``):
  a hook holds it from reading its cursors to saving the new ones (after its answer went out), so two
  hooks of one reader session (Qwen Code's second, empty-prompt call; two messages of one channel
  answered at once) never report the same lines, and other readers of a shared file never wait.
* :meth:`CursorStore.update` with ``expected`` (the entries the caller planned from) merges rather
  than overwrites: a writer whose entry another process moved meanwhile keeps the further of the two
  cursors into the same file, so a cursor never moves backwards.
* Every write goes to ``PATH.tmp`` in the same directory, then is renamed over ``PATH`` with
  :func:`os.replace`, so the file is never seen half-written (even when the writer is killed) and
  :meth:`CursorStore.read` needs no lock. It is not fsynced: a power cut that loses the last write
  leaves a cursor behind, which repeats news and never loses any.
* One parse and a small write per prompt: a process keeps the document it last read or wrote, with
  the file's bytes, while the file is the same (device, inode, size, modification time; checked
  again under the lock before a write), so a commit after a read parses nothing, and it edits in
  those bytes only the entries it moves (:func:`_patch`). A file another process wrote meanwhile is
  read again; a change an edit cannot make safely (a removal, several readers, a file another writer
  spaced or escaped otherwise, one its parse dropped an entry from) is dumped whole.
* Files are created ``0600``, and directories the store has to create ``0700``.
* A file that is not a JSON object of objects is moved aside to ``PATH.corrupt-<UTC timestamp>`` with a
  warning on the ``sidelight.cursors`` logger and treated as empty; an entry whose ``offset`` is not a
  non-negative integer is dropped with a warning. Neither raises.
* I/O errors while writing (disk full, read-only directory) raise :class:`OSError` and leave the
  previous file as it was.

>>> store = CursorStore(Path(state_dir) / "cursors.json")     # doctest: +SKIP
>>> store.update("main", {"discord": activity.cursor.as_dict()})  # doctest: +SKIP
>>> store.read("main")["discord"]["offset"]                   # doctest: +SKIP
1234

The locking is POSIX-only (``fcntl``).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
import zlib
from collections.abc import Mapping
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.statefile import CorruptStateError, SharedState, private_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = ["CursorStore", "ReadingLock"]

logger = get_logger("sidelight.cursors")

#: Reader name -> writer name -> entry, as stored.
if TYPE_CHECKING:
    _State = dict[str, dict[str, dict[str, Any]]]


class CursorStore:
    """Cursors of reader sessions into writer sessions, kept in one JSON file at ``path``.

    The file and its directory need not exist: a missing file reads as empty, and the first
    :meth:`update` creates both. The object holds no state of its own beyond ``path``, so any number of
    stores (in any number of processes) may share one file.
    """

    __slots__ = ("_dump", "_encode", "_file", "path")

    def __init__(self, path: str | os.PathLike[str], *, fast: bool | None = None) -> None:
        """``fast``: encode and decode with orjson (the watcher saves a thousand cursors a second; a
        hook, whose start-up cost counts, keeps the standard library's json). ``None``: read with orjson
        when this process has already imported it (the watcher answering a hook), where it costs nothing."""
        #: The JSON file.
        self.path = Path(path)
        self._encode: Callable[[Any], bytes] = _dump
        loads: Callable[[bytes], Any] = jsonio.loads
        dump: Callable[[Any], bytes] = _dump
        if fast:
            import orjson

            self._encode, loads = orjson.dumps, orjson.loads
            dump = orjson.dumps
        elif fast is None and "orjson" in sys.modules:
            # The document with it too; new entries are still checked with json (see update), which
            # refuses NaN where orjson writes null.
            orjson = sys.modules["orjson"]
            loads, dump = orjson.loads, orjson.dumps
        self._dump = dump
        # Not durable: a cursor that loses its last write to a power cut repeats one digest (see
        # write_atomic), and the fsync calls were the biggest part of a prompt hook's own work.
        self._file: SharedState[_State] = SharedState(
            self.path,
            lambda data: _parse(data, self.path, loads),
            dump,
            logger,
            durable=False,
            copy=_copy,
            share=_share,
            exact=_exact,
        )

    def __repr__(self) -> str:
        return f"CursorStore({self.path!r})"

    def read(self, reader: str, *, shared: bool = False) -> dict[str, dict[str, Any]]:
        """A snapshot of ``reader``'s cursors: writer name -> entry (a fresh dict the caller may keep).

        ``shared``: the entries are the ones this process keeps for the file (to be read, never
        changed in place), not copies: a prompt's thousand entries are not copied for a digest that
        only reads them.

        A missing file, or a reader the file does not mention, gives ``{}``. A corrupt file is moved
        aside (see the module docs) and gives ``{}``. Raises :class:`OSError` only when the file exists
        but cannot be read (for example, permission denied).
        """
        return self._file.read(shared=shared).get(reader, {})

    def readers(self) -> list[str]:
        """The names of the readers the file holds cursors for, sorted."""
        return sorted(self._file.read())

    def reading(self, reader: str, deadline: float | None = None) -> ReadingLock | None:
        """Takes ``reader``'s reading lock, waiting for another holder until ``deadline`` (a
        :func:`time.monotonic` time; ``None``: as long as it takes). Returns the held lock (``release`` it,
        or use it as a context manager), or ``None`` when another process or thread held it until the
        deadline. A process that dies releases its locks. Raises :class:`OSError` when the lock file
        cannot be made."""
        tag = zlib.crc32(reader.encode("utf-8", "surrogatepass"))
        path = self.path.with_name(f"{self.path.name}.{tag:08x}.reading")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            private_dir(self.path.parent)  # each missing level 0700: the state directory too
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            pause = 0.001
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return ReadingLock(fd)
                except BlockingIOError:
                    pass
                # Polled rather than blocking: a lock's wait has to end at the hook's deadline.
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    os.close(fd)
                    return None
                time.sleep(pause if left is None else min(pause, left))
                pause = min(pause * 2, 0.02)
        except BaseException:
            os.close(fd)
            raise

    def update(
        self,
        reader: str,
        entries: Mapping[str, Mapping[str, Any]],
        *,
        remove: Iterable[str] = (),
        expected: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Set ``reader``'s entries for the writers in ``entries`` and delete those named in ``remove``.

        Every other reader's and writer's entry stays as it is on disk at the moment of the write (the
        read-modify-write happens under the file's lock). A writer both in ``entries`` and in ``remove``
        is removed. A reader left with no writers is dropped from the file.

        ``expected``: the reader's entries as the caller read them before it planned ``entries``. A
        writer whose stored entry is no longer the expected one was saved by someone else meanwhile;
        when that entry points into the same file (device and inode) at least as far, it is kept: a
        cursor never moves backwards.

        Raises :class:`ValueError` when an entry has no non-negative integer ``offset`` or holds a value
        JSON cannot represent (``TypeError`` for a non-string name or a non-JSON object), before anything
        is written; :class:`OSError` when the file cannot be written, in which case the previous file is
        untouched.
        """
        new = _checked(reader, entries)
        if isinstance(remove, str):
            raise TypeError("remove takes a collection of writer names, not one string")
        gone = set(remove)
        if not new and not gone:
            return
        # Fail on values JSON cannot hold now, not after taking the lock.
        self._encode({reader: new})

        written: list[str] = []

        def change(state: _State) -> _State:
            mine = state.get(reader, {})
            if expected is None:
                mine.update(new)
                written[:] = new
            else:
                for writer, entry in new.items():
                    stored = mine.get(writer)
                    if stored is None or stored == expected.get(writer) or not _further(stored, entry):
                        mine[writer] = entry
                        written.append(writer)
            for writer in gone:
                mine.pop(writer, None)
            if mine:
                state[reader] = mine
            else:
                state.pop(reader, None)
            return state

        def patch(data: bytes, before: _State, after: _State) -> bytes | None:
            # Removals are rare (the watcher's forgotten sessions): those files are dumped whole.
            return None if gone else _patch(data, before, after, reader, written, self._dump)

        self._file.update(change, patch)

    def replace(self, reader: str, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """Makes the file hold ``reader``'s ``entries`` and nothing else, without reading it first.

        For a file one process owns and keeps whole in memory, such as the watcher's
        ``watch/cursors.json`` (the watcher's lock keeps a second one out): it saves a thousand entries a
        second, and reading them back each time only to merge cost as much again. Any other reader's
        entries in the file are dropped; files that several processes share use :meth:`update`.
        Raises as :meth:`update` does, before anything is written.
        """
        new = _checked(reader, entries)
        self._file.replace(self._encode({reader: new} if new else {}))


class ReadingLock:
    """A reader's reading lock, held (:meth:`CursorStore.reading`) until :meth:`release`."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        """Releases the lock (once; later calls do nothing)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the lock

    def __enter__(self) -> ReadingLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _further(stored: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """``stored`` points into the same file as ``entry`` (device and inode, both known) and at least as
    far: saving ``entry`` over it would move a cursor backwards."""
    inode = stored.get("inode")
    return (
        inode is not None
        and inode == entry.get("inode")
        and stored.get("dev") == entry.get("dev")
        and stored["offset"] >= entry["offset"]
    )


def _checked(reader: str, entries: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``entries`` as plain dicts; raises when a name or an entry is not one the store can keep."""
    if not isinstance(reader, str):
        raise TypeError(f"a reader name must be a string, not {reader!r}")
    new: dict[str, dict[str, Any]] = {}
    for writer, entry in entries.items():
        if not isinstance(writer, str):
            raise TypeError(f"a writer name must be a string, not {writer!r}")
        problem = _entry_problem(entry)
        if problem:
            raise ValueError(f"cursor entry for {reader!r} -> {writer!r}: {problem}")
        new[writer] = dict(entry)
    return new


def _copy(state: _State) -> _State:
    """A copy no caller's change can reach into the kept one: readers, writers and entries are new
    dicts (an entry's lists and ``extra`` are replaced, never changed, by the store's users)."""
    return {
        reader: {writer: dict(entry) for writer, entry in writers.items()}
        for reader, writers in state.items()
    }


def _share(state: _State) -> _State:
    """A copy of the readers' and writers' maps that shares the entries: for the store's own changes,
    which replace an entry rather than change it (a copy of a thousand entries cost each prompt more
    than the rest of a commit)."""
    return {reader: dict(writers) for reader, writers in state.items()}


class _Pruned(dict):  # type: ignore[type-arg]
    """A state :func:`_parse` dropped something from (a bad entry, a reader with no writers): its bytes
    are not the document, and are dumped again rather than patched."""

    __slots__ = ()


def _exact(state: _State) -> bool:
    return type(state) is not _Pruned


def _patch(
    data: bytes, before: _State, after: _State, reader: str, written: list[str], dump: Callable[[Any], bytes]
) -> bytes | None:
    """The bytes of ``after`` made by editing ``data``, the bytes of ``before``, where ``after`` is
    ``before`` with ``reader``'s entries of the writers ``written`` set (in that order) and nothing
    else changed. ``None`` when an edit cannot be made safely: the whole document is dumped instead.

    A prompt moves the cursors of the few siblings with news, and dumping a thousand entries cost a
    cold hook more than any other part of its commit. Only a file of one reader is edited. An entry
    is found by its writer's name and its old entry, dumped as the file's writer dumped it, preceded
    by ``{`` or ``,``: a ``"`` there is no string's content (which escapes its quotes), so the match
    is a name in an object, and it must be the only one; otherwise (another writer's spacing, a name
    written with escapes), no edit.
    """
    old = before.get(reader)
    new = after.get(reader)
    if len(before) != 1 or len(after) != 1 or not old or new is None:
        return None
    edits: list[tuple[int, int, bytes]] = []
    added: list[str] = []
    for writer in written:
        was = old.get(writer)
        if was is None:
            added.append(writer)
            continue
        span = _span(data, dump(writer), dump(was))
        if span is None:
            return None
        edits.append((span[0], span[1], dump(new[writer])))
    if added:
        # New writers go last, where a dict puts them: after the last old entry.
        last = next(reversed(old))
        span = _span(data, dump(last), dump(old[last]))
        if span is None:
            return None
        more = b"".join(b"," + dump(writer) + b":" + dump(new[writer]) for writer in added)
        edits.append((span[1], span[1], more))
    edits.sort()
    parts: list[bytes] = []
    at = 0
    for start, end, text in edits:
        if start < at:
            return None
        parts += (data[at:start], text)
        at = end
    parts.append(data[at:])
    return b"".join(parts)


def _span(data: bytes, name: bytes, entry: bytes) -> tuple[int, int] | None:
    """Where in ``data`` the one entry ``entry`` of the writer ``name`` (both dumped) stands."""
    needle = name + b":" + entry
    at = data.find(needle)
    if at < 1 or data[at - 1] not in b"{," or data.find(needle, at + 1) >= 0:
        return None
    start = at + len(name) + 1
    return start, start + len(entry)


def _dump(state: Mapping[str, Any]) -> bytes:
    return jsonio.dumps(state, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _entry_problem(entry: object) -> str | None:
    """Why ``entry`` is not a cursor entry, or ``None`` when it is one."""
    # A dict is told first, without the abstract-class check: a thousand entries a save.
    if not isinstance(entry, dict | Mapping):
        return f"must be an object, not {type(entry).__name__}"
    offset = entry.get("offset")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return f"offset must be a non-negative integer, not {offset!r}"
    return None


def _parse(data: bytes, path: Path, loads: Callable[[bytes], Any] = jsonio.loads) -> _State:
    """The state in ``data``; raises :class:`CorruptStateError` when the file's shape is wrong.

    Whole-file problems (not JSON, not an object of objects) are corruption; a single bad entry is
    dropped with a warning (the state is then a :class:`_Pruned`).
    """
    if not data.strip():
        return {}
    try:
        raw = loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CorruptStateError(f"not JSON: {error}") from None
    if not isinstance(raw, dict):
        raise CorruptStateError(f"the top level is {type(raw).__name__}, not an object")
    state: _State = {}
    pruned = False
    for reader, writers in raw.items():
        if not isinstance(writers, dict):
            raise CorruptStateError(f"reader {reader!r} maps to {type(writers).__name__}, not an object")
        bad = None
        for writer, entry in writers.items():
            # _entry_problem's rule, told inline for the thousand good entries of a prompt's file.
            if type(entry) is dict:
                offset = entry.get("offset")
                if type(offset) is int and offset >= 0:
                    continue
            problem = _entry_problem(entry)
            if problem:
                logger.warning("%s: dropping the cursor of %r -> %r: %s", path, reader, writer, problem)
                if bad is None:
                    bad = set()
                bad.add(writer)
        if bad is not None:
            pruned = True
            writers = {writer: entry for writer, entry in writers.items() if writer not in bad}
        if writers:
            state[reader] = writers
        else:
            pruned = True
    return _Pruned(state) if pruned else state
