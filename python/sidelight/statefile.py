"""State files: JSON documents that may have been damaged, and documents many processes share.

sidelight writes every state file atomically (a temporary file, ``fsync``, a rename), so a file that
does not parse was damaged from outside (a full disk under another tool, a hand edit, a copy cut
short). Such a file must never stop a hook or the watcher: :func:`load_json_state` moves it aside to
``PATH.corrupt-<UTC time>`` with a warning on the ``sidelight.state`` logger and answers ``None``, so
that the caller rebuilds its state; the damaged bytes stay on disk for whoever wants to look.

>>> data = load_json_state(state_dir / "lifecycle.json")   # doctest: +SKIP
>>> state = data if isinstance(data, dict) else {}         # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from _thread import get_ident  # not threading's: importing threading cost every prompt
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger, private_fd

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Collection
    from typing import Any, Generic, TypeVar
else:
    from sidelight._fast._typing import Generic

__all__ = [
    "CorruptStateError",
    "SharedState",
    "append_lines",
    "append_whole",
    "load_json_state",
    "move_aside",
    "parse_json_object",
    "private_dir",
    "private_fd",
    "private_tree",
    "regular_file_target",
    "shared_json",
    "write_atomic",
]

if TYPE_CHECKING:
    T = TypeVar("T")
else:
    T = None  # Generic[T] takes anything at run time (sidelight._fast._typing)

logger = get_logger("sidelight.state")


def move_aside(path: Path) -> Path:
    """Renames ``path`` to ``PATH.corrupt-<UTC time>`` (a free name) and returns the new path."""
    stamp = time.time()
    base = time.strftime("%Y%m%dT%H%M%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1e6):06d}Z"
    target = path.with_name(f"{path.name}.corrupt-{base}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{base}-{n}")
        n += 1
    path.replace(target)
    return target


def load_json_state(path: Path) -> Any:
    """The JSON value in ``path``, or ``None`` when it is missing, unreadable or corrupt.

    A file that is not JSON (or not UTF-8) is moved aside with a warning, unless it was replaced while
    it was read (another process wrote a good file meanwhile). An unreadable file (permission denied) is
    left where it is, with a warning. Never raises :class:`OSError` or :class:`ValueError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        logger.warning("cannot read %s: %s", path, error)
        return None
    try:
        seen = os.fstat(fd)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read()
    except OSError as error:
        logger.warning("cannot read %s: %s", path, error)
        return None
    finally:
        os.close(fd)
    try:
        return jsonio.loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        problem = f"not JSON: {error}"
    try:
        now = path.stat()
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
            return None  # replaced by a writer since it was read: the next load reads the new file
        aside = move_aside(path)
    except OSError as error:
        logger.warning("%s is corrupt (%s), cannot move it aside (%s); starting afresh", path, problem, error)
        return None
    logger.warning("%s is corrupt (%s); moved it to %s and starting afresh", path, problem, aside)
    return None


class CorruptStateError(ValueError):
    """Raised by a :class:`SharedState` parser for a file whose bytes or shape are wrong."""


class SharedState(Generic[T]):
    """One JSON document in one file, shared by any number of processes (cursor files, the facts store).

    Reads take no lock: every write replaces the file atomically (``PATH.tmp``, ``fsync``, a rename, and an
    ``fsync`` of the directory), so a reader sees the old document or the new one. :meth:`update` is a
    read-modify-write under an exclusive ``flock`` on ``PATH.lock``: concurrent updates lose nothing.
    ``parse(data)`` turns the file's bytes (``b""`` for a missing file) into the document and raises
    :class:`CorruptStateError` for damage; a damaged file is moved aside (:func:`move_aside`) with a
    warning and read as ``parse(b"")``: nothing here raises for it, a hook may be waiting. Files are
    ``0600``; the directories it creates, ``0700``.
    """

    __slots__ = (
        "_copy",
        "_dump",
        "_durable",
        "_exact",
        "_lock_path",
        "_log",
        "_parse",
        "_share",
        "_tmp_path",
        "path",
    )

    def __init__(
        self,
        path: Path,
        parse: Callable[[bytes], T],
        dump: Callable[[T], bytes],
        log: logging.Logger = logger,
        *,
        durable: bool = True,
        copy: Callable[[T], T] | None = None,
        share: Callable[[T], T] | None = None,
        exact: Callable[[T], bool] | None = None,
    ) -> None:
        """``durable=False``: writes skip the ``fsync`` calls (see :func:`write_atomic`). ``copy``: keep
        the last document of this path read or written in this process, and hand out copies of it
        while the file is that same file (device, inode, size, modification time): a long-lived
        process (the watcher answering hooks) then parses a session's cursors once, not every prompt,
        and a hook's :meth:`update` after its :meth:`read` parses nothing.

        ``share``: a cheaper copy (the default: ``copy``) for the document :meth:`update`'s ``change``
        is given and the one kept after a write, for documents whose ``change`` functions replace the
        values they change rather than change them in place. ``exact(document)``: the parsed document
        is all its bytes say (the parser dropped nothing): the bytes are then kept with it, and
        :meth:`update`'s ``patch`` may edit them rather than dump the whole document again."""
        self.path = path
        self._durable = durable
        self._copy = copy
        self._share = share or copy
        self._exact = exact
        self._parse = parse
        self._dump = dump
        self._log = log
        self._lock_path = path.with_name(path.name + ".lock")
        self._tmp_path = path.with_name(path.name + ".tmp")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    def read(self, *, shared: bool = False) -> T:
        """The document. Raises :class:`OSError` only when the file exists but cannot be read.

        ``shared``: through ``share`` rather than ``copy``, for a caller that only reads what the
        cheaper copy shares with the kept document."""
        copy = self._share if shared else self._copy
        try:
            return self._read_document(copy)[0]
        except CorruptStateError:
            pass
        # Replaces are atomic, so a corrupt file was damaged from outside. Move it aside under the lock,
        # unless a writer replaced it meanwhile.
        try:
            with self._locked():
                return self._load_locked(copy)[0]
        except OSError as error:
            self._log.warning(
                "%s is corrupt and cannot be moved aside (%s); reading it as empty", self.path, error
            )
            return self._parse(b"")

    def update(
        self,
        change: Callable[[T], T | None],
        patch: Callable[[bytes, T, T], bytes | None] | None = None,
    ) -> T:
        """Applies ``change`` to the document under the lock and writes what it returns (``None``:
        nothing to write); returns the document as it now is. An :class:`OSError` from writing leaves
        the previous file as it was.

        ``patch(data, before, after)``: the bytes of ``after`` made from ``data``, the file's bytes,
        which hold exactly ``before`` (``None``: dump ``after`` whole). Called only for a kept document
        (``copy`` and ``exact``), with ``before`` the kept one, never changed: for a large document of
        which a write changes a few values, an edit of the bytes costs less than dumping it all."""
        self._ensure_dir()
        with self._locked():
            state, before, data = self._load_locked(self._share)
            new = change(state)
            if new is None:
                return state
            out = None
            if patch is not None and data is not None and before is not None:
                out = patch(data, before, new)
            if out is None:
                out = self._dump(new)
            self._write(out)
            if self._copy is not None:
                self._keep(new, out if self._exact is not None else None)
            return new

    def replace(self, data: bytes) -> None:
        """Writes ``data`` (the dumped document) under the lock, without reading the file: for a
        document one process owns. An :class:`OSError` leaves the previous file as it was."""
        self._ensure_dir()
        with self._locked():
            self._write(data)

    def _read_bytes(self) -> bytes:
        try:
            with open(self.path, "rb") as file:  # noqa: PTH123 (the plain builtin is faster)
                return file.read()
        except (FileNotFoundError, NotADirectoryError):
            return b""

    def _read_document(self, copy: Callable[[T], T] | None) -> tuple[T, T | None, bytes | None]:
        """The file's document (from the kept one, when the file did not change, through ``copy``),
        the kept document itself (never handed out to be changed; ``None`` when none is kept) and
        the file's bytes when they hold exactly that document (else ``None``); raises
        :class:`CorruptStateError` for a damaged file."""
        if self._copy is None or copy is None:
            return self._parse(self._read_bytes()), None, None
        try:
            file = open(self.path, "rb")  # noqa: PTH123, SIM115 (the plain builtin is faster)
        except (FileNotFoundError, NotADirectoryError):
            return self._parse(b""), None, None
        with file:
            found = os.fstat(file.fileno())
            if found.st_mode & 0o077:
                # Left readable by an older version or a loose umask: ours are 0600 (a write makes them
                # so anyway; this covers a file that is only read). The fstat was needed already.
                try:  # noqa: SIM105 (contextlib: not on the prompt's path)
                    private_fd(file.fileno())
                except OSError:
                    pass
            identity = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
            kept = _KEPT.get(self.path)
            if kept is not None and kept[0] == identity:
                return copy(kept[1]), kept[1], kept[2]
            data = file.read()
        document = self._parse(data)
        exact = self._exact is not None and self._exact(document)
        # What update's change is given shares what it never changes with the kept one (copy is
        # then the cheap share); what read hands out is the caller's own.
        original = copy(document)
        _remember(self.path, identity, original, data if exact else None)
        return document, original, data if exact else None

    def _keep(self, document: T, data: bytes | None) -> None:
        """Keeps what was just written (``data``, when the bytes are to be kept too) as the file's
        document (its identity as it is now)."""
        assert self._share is not None
        try:
            found = self.path.stat()
        except OSError:
            return
        _remember(
            self.path,
            (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns),
            self._share(document),
            data,
        )

    def _load_locked(self, copy: Callable[[T], T] | None) -> tuple[T, T | None, bytes | None]:
        try:
            return self._read_document(copy)
        except CorruptStateError as error:
            aside = move_aside(self.path)
            self._log.warning(
                "%s is corrupt (%s); moved it to %s and starting afresh", self.path, error, aside
            )
            return self._parse(b""), None, None

    def _ensure_dir(self) -> None:
        _make_dirs(self.path.parent)

    def _locked(self) -> _Locked:
        return _Locked(self._lock_path)

    def _write(self, data: bytes) -> None:
        # Only the lock holder touches PATH.tmp: a fixed name is safe, and one a killed writer left
        # behind is simply overwritten.
        write_atomic(self.path, data, tmp=self._tmp_path, durable=self._durable)


class _Locked:
    """The exclusive ``flock`` on a lock file, held for a ``with`` block (a class, not
    ``contextlib.contextmanager``: importing contextlib cost every prompt half a millisecond)."""

    __slots__ = ("_fd", "_path")

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> None:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, -1
        os.close(fd)  # releases the lock


#: The documents :class:`SharedState` keeps (``copy=``): path -> (the file's identity, a private copy,
#: the file's bytes when they hold exactly that document).
_KEPT: dict[Path, tuple[tuple[int, int, int, int], Any, bytes | None]] = {}
#: At most this many are kept (a watcher answers many sessions; each keeps only its latest).
KEPT_DOCUMENTS = 64


def _remember(path: Path, identity: tuple[int, int, int, int], document: Any, data: bytes | None) -> None:
    if path not in _KEPT and len(_KEPT) >= KEPT_DOCUMENTS:
        _KEPT.pop(next(iter(_KEPT)))  # the oldest first
    _KEPT[path] = (identity, document, data)


def parse_json_object(data: bytes) -> dict[str, Any]:
    """A :class:`SharedState` parser for a document that is one JSON object (``{}`` when empty)."""
    if not data.strip():
        return {}
    try:
        value = jsonio.loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CorruptStateError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise CorruptStateError(f"the top level is {type(value).__name__}, not an object")
    return value


def shared_json(path: str | os.PathLike[str]) -> SharedState[dict[str, Any]]:
    """A JSON object in a file shared by many processes (the facts store, the history's key index):
    indented, for people who look."""
    return SharedState(Path(path), parse_json_object, _dump_indented)


def _dump_indented(document: dict[str, Any]) -> bytes:
    return jsonio.dumps(document, ensure_ascii=False, allow_nan=False, indent=1).encode() + b"\n"


def append_lines(path: str, data: bytes) -> None:
    """Appends ``data`` (whole lines) to the file at ``path``, created ``0600`` when missing, all of it
    or none (:func:`append_whole`); raises :class:`OSError` when it could not."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        append_whole(fd, data, path)
    finally:
        os.close(fd)


def append_whole(fd: int, data: bytes, path: str | os.PathLike[str] | None = None) -> None:
    """Appends ``data`` (whole lines) to the file open on ``fd`` (``O_APPEND``), all of it or none: one
    ``write`` of the whole bytes, and when the file takes only part of them (a full disk: a short
    write, then ``ENOSPC``), the part is cut off again, so no line is left half written to swallow the
    next one. Under an exclusive ``flock`` of the file, so that the cut never takes a line another
    appender (another hook) wrote after this one. Raises :class:`OSError` (with ``path`` as its file
    name) when the bytes could not be written; the file is then as it was."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        start = os.fstat(fd).st_size
        written = 0
        try:
            written = os.write(fd, data)
            if written < len(data):
                import errno  # only on a full disk

                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError as error:
            if error.filename is None and path is not None:
                error.filename = os.fspath(path)
            if written or os.fstat(fd).st_size != start:
                # A part was written: cut it off (shrinking a file needs no space).
                try:  # noqa: SIM105 (contextlib: an import on every prompt)
                    os.ftruncate(fd, start)
                except OSError:
                    pass
            raise
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(
    path: Path,
    data: bytes | Callable[[int], None],
    *,
    mode: int = 0o600,
    tmp: Path | None = None,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` (bytes, or a function that writes to the file descriptor it is
    given) so that a reader sees the old file or the new one, never a part: a temporary file beside it
    (``tmp``, else a name unique to this process and thread) with ``mode``, ``fsync``, a rename, and an
    ``fsync`` of the directory. The one atomic writer of sidelight's files.

    ``durable=False`` leaves out both ``fsync`` calls: the rename alone keeps the file whole when the
    writer is killed, and only a machine that loses power may come back with the previous version (or,
    on a file system that does not order a replaced file's data before its rename, a damaged one, which
    its reader moves aside). For files that say where a reader stopped (the cursors): losing the last
    write repeats one digest, while the two ``fsync`` calls cost every prompt several milliseconds.

    The temporary file is always a new one (``O_CREAT | O_EXCL | O_NOFOLLOW``; one a killed writer left
    is unlinked first), and the rename replaces the name ``path``, never what a symbolic link there
    points to: nothing is written into a file that was there, even in a folder someone else filled (a
    repository's work tree)."""
    if tmp is None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{get_ident()}.tmp")
    fd = _new_file(tmp, mode)
    try:
        try:
            os.fchmod(fd, mode)  # an old temporary file may have been left with other bits
            if callable(data):
                data(fd)
            else:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
    except BaseException as error:
        try:  # noqa: SIM105 (contextlib: an import on every prompt)
            tmp.unlink()
        except OSError:
            pass
        if isinstance(error, OSError) and error.filename is None:
            error.filename = os.fspath(path)  # a write on the descriptor names no file: say which
        raise
    if not durable:
        return
    # Make the rename itself durable. Some file systems refuse to fsync a directory: the file is
    # already in place, so that is no reason to fail.
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


#: How :func:`write_atomic` makes its temporary file: a new one, never through a symbolic link.
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _new_file(tmp: Path, mode: int) -> int:
    """A descriptor of ``tmp``, a file made now. A file or link of that name (a writer killed before
    its rename, or something planted there) is unlinked and the file made again: never opened, so a
    hard link to another file is not truncated and a symbolic link not followed."""
    try:
        return os.open(tmp, _NEW_FILE_FLAGS, mode)
    except FileExistsError:
        tmp.unlink()  # a folder of that name raises: write_atomic fails, nothing changed
        return os.open(tmp, _NEW_FILE_FLAGS, mode)


def regular_file_target(path: str | os.PathLike[str], *, follow: bool = True) -> Path:
    """Where to write a file a person named (``recap -w``, a skill's folder): ``path`` with its
    symbolic links followed, when that is a regular file or nothing yet. The one check of such paths.

    :func:`write_atomic` renames over what is there: over a FIFO, a device node or a socket that
    would replace it with a regular file (as root, a device file), and reading one first would block.
    Raises :class:`sidelight.errors.NotARegularFileError` (the command line exits 2) for those and a
    link to one, :class:`OSError` when the path cannot be looked at.

    ``follow=False``: a path in a folder that someone else may have filled (a repository's work tree,
    where sidelight writes ``_handoff.md``): no link is followed, and only a regular file this user
    owns, or nothing, may be replaced; a symbolic link there (even to a regular file of the user's)
    and a file of another user's are refused as well. The answer is then ``path`` itself."""
    from sidelight.errors import NotARegularFileError

    if not follow:
        return _own_file_target(Path(path))
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target  # a new file (or a link to one that does not exist yet)
    if stat.S_ISREG(mode):
        return target
    kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
    shown = os.fspath(path) if os.fspath(path) == os.fspath(target) else f"{os.fspath(path)} (-> {target})"
    raise NotARegularFileError(
        f"{shown}: is {kind}; sidelight writes only regular files (or _handoff.md in a folder)"
    )


def _own_file_target(path: Path) -> Path:
    """:func:`regular_file_target` with ``follow=False``."""
    from sidelight.errors import NotARegularFileError

    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return path
    if stat.S_ISREG(found.st_mode) and found.st_uid == os.geteuid():
        return path
    if stat.S_ISREG(found.st_mode):
        kind = f"a file of another user's (uid {found.st_uid})"
    elif stat.S_ISLNK(found.st_mode):
        kind = f"a symbolic link (to {path.readlink()})"
    else:
        kind = _FILE_KINDS.get(stat.S_IFMT(found.st_mode), "not a regular file")
    raise NotARegularFileError(
        f"{path}: is {kind}; sidelight writes there only a regular file of this user's, never through a link"
    )


_FILE_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def _make_dirs(path: Path) -> None:
    """Makes ``path`` and each missing folder above it, each ``0700`` (``Path.mkdir(parents=True)``
    gives the levels above the umask's mode)."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:  # noqa: SIM105 (contextlib: an import on every prompt)
            os.mkdir(directory, 0o700)  # noqa: PTH102 (a mode for each level, unlike Path.mkdir)
        except FileExistsError:
            pass


#: The folders :func:`private_dir` already looked at in this process (their paths as given).
_PRIVATE: set[str] = set()

#: How a folder or a file is opened to change its mode: never through a symbolic link, never waiting
#: for a FIFO's writer, never taking a terminal.
_DIR_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY


def private_dir(path: str | os.PathLike[str], *, create: bool = True) -> None:
    """Makes ``path`` a private folder of sidelight's, which only its owner may enter. The one way
    sidelight makes its folders in the state directory.

    ``create``: a missing folder is made ``0700``, and so is each missing level above it (without it, a
    missing folder stays missing). A folder that exists loses the group's and others' bits when it is
    this user's (``0755`` left by an older version or a loose umask becomes ``0700``); one another user
    owns is left as it is, and so is a symbolic link (its target is used, never changed: the mode is
    changed through a descriptor opened with ``O_NOFOLLOW``).

    Once per process per folder: the first call costs one ``lstat`` (with ``create``, after the
    ``mkdir`` that finds the folder there), the next ones only that ``mkdir`` (without ``create``,
    nothing), so that a hook can afford it on every prompt. Raises :class:`OSError` when the folder
    cannot be made, or ``path`` is something else than a folder (:class:`NotADirectoryError`)."""
    key = os.fspath(path)
    if create:
        try:
            os.mkdir(key, 0o700)  # noqa: PTH102 (one syscall on the prompt's path, no Path made)
        except FileExistsError:
            pass
        except FileNotFoundError:
            _make_dirs(Path(key))
        except OSError:
            # A read-only or foreign file system may say so before it says the folder exists: an
            # existing folder will do, as with Path.mkdir(exist_ok=True).
            if not os.path.isdir(key):  # noqa: PTH112
                raise
        else:
            _PRIVATE.add(key)
            return
    if key in _PRIVATE:
        return
    try:
        found = os.lstat(key)
    except FileNotFoundError:
        if create:
            raise
        return
    if stat.S_ISDIR(found.st_mode):
        _tighten(key, found)
    elif not (stat.S_ISLNK(found.st_mode) and os.path.isdir(key)):  # noqa: PTH112
        import errno  # only for a state directory that is no folder

        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), key)
    _PRIVATE.add(key)


def private_tree(root: Path, folders: Collection[str], files: Callable[[str], bool]) -> int:
    """Makes sidelight's own entries of the state directory ``root`` private, as :func:`private_dir`
    does (only what this user owns; never through a symbolic link): ``root`` itself, the folders in it
    named in ``folders`` and everything in them (folders ``0700``, files ``0600``), and the files in it
    whose names ``files`` accepts (``0600``). Other entries of ``root`` are left as they are (a state
    directory set to a folder that holds other things), and so are sockets, FIFOs, devices, links and
    another user's folder with all it holds.

    It looks at every entry: for a process's start (``sidelight watch``, ``sidelight status``), never a
    hook's path. Returns how many entries it changed; never raises :class:`OSError` (what it cannot
    look at or change stays as it is)."""
    key = os.fspath(root)
    changed = 0
    try:
        found = os.lstat(key)
        if stat.S_ISDIR(found.st_mode):
            changed += _tighten(key, found)
            _PRIVATE.add(key)
        # A folder the user linked in as the state directory is walked into (the link is theirs).
        top = os.open(key, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    except OSError:
        return changed
    try:
        for name in os.listdir(top):  # noqa: PTH208 (names in a folder open on a descriptor)
            try:
                if name in folders:
                    changed += _private_folder(name, top)
                elif files(name):
                    changed += _tighten(name, os.stat(name, dir_fd=top, follow_symlinks=False), top)
            except OSError:
                continue  # gone meanwhile, or not ours to change: left as it is
    except OSError:
        pass
    finally:
        os.close(top)
    return changed


def _private_folder(name: str, parent: int) -> int:
    """:func:`private_tree` for the folder ``name`` in the folder open on ``parent`` and all it holds:
    how many entries it changed. A folder another user owns is neither changed nor entered."""
    uid = os.geteuid()
    found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != uid:
        return 0
    changed = int(_tighten(name, found, parent))
    # fwalk does not follow links and makes sure each folder it enters is the one it listed.
    for _, folders, names, fd in os.fwalk(name, dir_fd=parent, follow_symlinks=False):
        entered = []
        for entry in [*folders, *names]:
            try:
                found = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                changed += _tighten(entry, found, fd)
            except OSError:
                continue
            if entry in folders and stat.S_ISDIR(found.st_mode) and found.st_uid == uid:
                entered.append(entry)
        folders[:] = entered
    return changed


def _tighten(name: str, found: os.stat_result, dir_fd: int | None = None) -> bool:
    """Takes the group's and others' bits off ``name`` (in the folder open on ``dir_fd``), a folder or a
    regular file ``lstat`` found as ``found``, when it is this user's; true when it did. Raises
    :class:`OSError`."""
    if not found.st_mode & 0o077 or found.st_uid != os.geteuid():
        return False
    if stat.S_ISDIR(found.st_mode):
        flags = _DIR_FLAGS
    elif stat.S_ISREG(found.st_mode):
        flags = _FILE_FLAGS
    else:
        return False  # a link, a socket, a FIFO, a device: left as they are
    fd = os.open(name, flags, dir_fd=dir_fd)
    try:
        if not os.path.samestat(os.fstat(fd), found):
            return False  # replaced since it was looked at: whatever is there now was not judged
        private_fd(fd)
    finally:
        os.close(fd)
    return True
