"""The cursor store: where each reader session stopped reading each of its sibling (writer) sessions.

One JSON file holds every cursor, in the shape the seed tool wrote::

    {"main": {"discord": {"offset": 1234}}}
     reader    writer     entry

An entry is a JSON object with at least a non-negative integer ``offset``. sidelight stores there the
fields of :meth:`sidelight.Cursor.as_dict` (``offset``, ``dev``, ``inode``, ``head_len``, ``head_hash``,
``tail_hash``, ``last_message``) and, for a session with more than one file (subagents), an ``"extra"``
object mapping each further path to its own cursor dict. The store interprets nothing but ``offset``:
any other JSON value in an entry is kept as given, and an old file with bare offsets loads as it is.

Safety, for many hooks running at once:

* :meth:`CursorStore.update` is a read-modify-write under an exclusive ``fcntl.flock`` on the sibling
  file ``PATH.lock``: it replaces only the writers it is given, so concurrent hooks never lose each
  other's updates.
* Every write goes to ``PATH.tmp`` in the same directory, is flushed and fsynced, then renamed over
  ``PATH`` with :func:`os.replace`, so the file is never seen half-written (even when the writer is
  killed) and :meth:`CursorStore.read` needs no lock.
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

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidelight.statefile import move_aside

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["CursorStore"]

logger = logging.getLogger("sidelight.cursors")

#: Reader name -> writer name -> entry, as stored.
_State = dict[str, dict[str, dict[str, Any]]]


class _Corrupt(Exception):
    """The file's bytes are not a cursor file (internal: never leaves this module)."""


class CursorStore:
    """Cursors of reader sessions into writer sessions, kept in one JSON file at ``path``.

    The file and its directory need not exist: a missing file reads as empty, and the first
    :meth:`update` creates both. The object holds no state of its own beyond ``path``, so any number of
    stores (in any number of processes) may share one file.
    """

    __slots__ = ("_lock_path", "_tmp_path", "path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        #: The JSON file.
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._tmp_path = self.path.with_name(self.path.name + ".tmp")

    def __repr__(self) -> str:
        return f"CursorStore({self.path!r})"

    def read(self, reader: str) -> dict[str, dict[str, Any]]:
        """A snapshot of ``reader``'s cursors: writer name -> entry (a fresh dict the caller may keep).

        A missing file, or a reader the file does not mention, gives ``{}``. A corrupt file is moved
        aside (see the module docs) and gives ``{}``. Raises :class:`OSError` only when the file exists
        but cannot be read (for example, permission denied).
        """
        return self._load_unlocked().get(reader, {})

    def readers(self) -> list[str]:
        """The names of the readers the file holds cursors for, sorted."""
        return sorted(self._load_unlocked())

    def update(
        self,
        reader: str,
        entries: Mapping[str, Mapping[str, Any]],
        *,
        remove: Iterable[str] = (),
    ) -> None:
        """Set ``reader``'s entries for the writers in ``entries`` and delete those named in ``remove``.

        Every other reader's and writer's entry stays as it is on disk at the moment of the write (the
        read-modify-write happens under the file's lock). A writer both in ``entries`` and in ``remove``
        is removed. A reader left with no writers is dropped from the file.

        Raises :class:`ValueError` when an entry has no non-negative integer ``offset`` or holds a value
        JSON cannot represent (``TypeError`` for a non-string name or a non-JSON object), before anything
        is written; :class:`OSError` when the file cannot be written, in which case the previous file is
        untouched.
        """
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
        if isinstance(remove, str):
            raise TypeError("remove takes a collection of writer names, not one string")
        gone = set(remove)
        if not new and not gone:
            return
        # Fail on values JSON cannot hold now, not after taking the lock.
        _dump({reader: new})

        self._ensure_dir()
        with self._locked():
            state = self._load_locked()
            mine = state.get(reader, {})
            mine.update(new)
            for writer in gone:
                mine.pop(writer, None)
            if mine:
                state[reader] = mine
            else:
                state.pop(reader, None)
            self._write(_dump(state))

    # -- loading -----------------------------------------------------------------------------------

    def _read_bytes(self) -> bytes | None:
        try:
            with open(self.path, "rb") as file:  # noqa: PTH123 (the plain builtin is faster)
                return file.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _load_unlocked(self) -> _State:
        data = self._read_bytes()
        if data is None:
            return {}
        try:
            return _parse(data, self.path)
        except _Corrupt:
            pass
        # Replaces are atomic, so a corrupt file was damaged from outside. Move it aside under the lock,
        # unless a writer replaced it meanwhile; never raise, a hook is waiting.
        try:
            with self._locked():
                return self._load_locked()
        except OSError as error:
            logger.warning(
                "%s is corrupt and cannot be moved aside (%s); reading it as empty", self.path, error
            )
            return {}

    def _load_locked(self) -> _State:
        """The file's state, moving a corrupt file aside. Call with the lock held."""
        data = self._read_bytes()
        if data is None:
            return {}
        try:
            return _parse(data, self.path)
        except _Corrupt as error:
            aside = self._move_aside()
            logger.warning("%s is corrupt (%s); moved it to %s and starting afresh", self.path, error, aside)
            return {}

    def _move_aside(self) -> Path:
        return move_aside(self.path)

    # -- writing -----------------------------------------------------------------------------------

    def _ensure_dir(self) -> None:
        """Create the missing directories above the file, each ``0700``."""
        missing = []
        parent = self.path.parent
        while not parent.exists() and parent != parent.parent:
            missing.append(parent)
            parent = parent.parent
        for directory in reversed(missing):
            with contextlib.suppress(FileExistsError):
                os.mkdir(directory, 0o700)  # noqa: PTH102 (mode for each level, unlike Path.mkdir)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _write(self, data: bytes) -> None:
        """Atomically replace the file with ``data``. Call with the lock held.

        Only the lock holder touches ``PATH.tmp``, so a fixed name is safe, and one left behind by a
        killed writer is simply overwritten.
        """
        tmp = self._tmp_path
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600)
        try:
            try:
                os.fchmod(fd, 0o600)  # in case an old temp file was left with other bits
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            tmp.replace(self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        # Make the rename itself durable. Some file systems refuse to fsync a directory: the file is
        # already in place, so that is no reason to fail.
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.path.parent, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _dump(state: Mapping[str, Any]) -> bytes:
    return json.dumps(state, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _entry_problem(entry: object) -> str | None:
    """Why ``entry`` is not a cursor entry, or ``None`` when it is one."""
    if not isinstance(entry, Mapping):
        return f"must be an object, not {type(entry).__name__}"
    offset = entry.get("offset")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return f"offset must be a non-negative integer, not {offset!r}"
    return None


def _parse(data: bytes, path: Path) -> _State:
    """The state in ``data``; raises :class:`_Corrupt` when the file's shape is wrong.

    Whole-file problems (not JSON, not an object of objects) are corruption; a single bad entry is
    dropped with a warning.
    """
    if not data.strip():
        return {}
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise _Corrupt(f"not JSON: {error}") from None
    if not isinstance(raw, dict):
        raise _Corrupt(f"the top level is {type(raw).__name__}, not an object")
    state: _State = {}
    for reader, writers in raw.items():
        if not isinstance(writers, dict):
            raise _Corrupt(f"reader {reader!r} maps to {type(writers).__name__}, not an object")
        kept: dict[str, dict[str, Any]] = {}
        for writer, entry in writers.items():
            problem = _entry_problem(entry)
            if problem:
                logger.warning("%s: dropping the cursor of %r -> %r: %s", path, reader, writer, problem)
            else:
                kept[writer] = entry
        if kept:
            state[reader] = kept
    return state
