"""Loggers that cost nothing until a record is made, and the hook's log file.

Importing :mod:`logging` costs a prompt hook more than everything else it imports (``logging`` brings
``traceback``, ``threading``, ``string`` and a regex compile with it: about as long as a bare interpreter
start here), and a hook that goes well logs nothing. So every module on the hook's path takes its
logger from :func:`get_logger`: a stand-in for :class:`logging.Logger` that imports :mod:`logging` on the
first record that would go anywhere, and delegates from then on.

A record "would go nowhere" only when :mod:`logging` was never imported (so nobody configured it: the
stdlib's defaults hold, and they drop everything below ``WARNING``) and no :func:`hook_log` is waiting for
it. Anything else is handed to the real logger, which decides as it always does.

Imports only what a bare interpreter has loaded (``os``, ``sys``), like :mod:`sidelight.warm`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from typing import Any

__all__ = ["LOG_FORMAT", "file_handler", "get_logger", "hook_log", "last_line_says", "private_fd"]

#: How the log file's lines look.
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_DEBUG, _INFO, _WARNING, _ERROR, _CRITICAL = 10, 20, 30, 40, 50

#: Log files waiting for logging to be imported (:func:`hook_log`), with the handlers attached once it was.
_waiting: list[_HookLog] = []


def get_logger(name: str) -> logging.Logger:
    """The logger called ``name``, as :func:`logging.getLogger` gives it, imported on first use."""
    return _LazyLogger(name)  # type: ignore[return-value]  # duck-typed: the methods modules call


def _imported() -> Any:
    """:mod:`logging`, imported, with any waiting :func:`hook_log` attached."""
    import logging

    for waiting in _waiting:
        waiting.attach(logging)
    return logging


def _goes_nowhere(level: int) -> bool:
    if "logging" in sys.modules:
        return False
    threshold = _INFO if _waiting else _WARNING
    return level < threshold


class _LazyLogger:
    """The methods of :class:`logging.Logger` that sidelight's modules call; anything else (``handlers``,
    ``setLevel``...) imports :mod:`logging` and answers from the real logger."""

    __slots__ = ("_real", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: logging.Logger | None = None

    def _logger(self) -> logging.Logger:
        real = self._real
        if real is None:
            real = self._real = _imported().getLogger(self.name)
        return real

    def _emit(self, level: int, msg: object, args: tuple[object, ...], kwargs: dict[str, Any]) -> None:
        if _goes_nowhere(level):
            return
        if _waiting:  # a hook_log opened since this logger was first used
            _imported()
        # One frame more than a direct call: the record names the caller, not this module.
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
        self._logger().log(level, msg, *args, **kwargs)

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(_DEBUG, msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(_INFO, msg, args, kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(_WARNING, msg, args, kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(_ERROR, msg, args, kwargs)

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        self._emit(_ERROR, msg, args, {**kwargs, "exc_info": exc_info})

    def critical(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(_CRITICAL, msg, args, kwargs)

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        self._emit(level, msg, args, kwargs)

    def isEnabledFor(self, level: int) -> bool:
        return not _goes_nowhere(level) and self._logger().isEnabledFor(level)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._logger(), attribute)

    def __repr__(self) -> str:
        return f"<lazy logger {self.name}>"


#: How sidelight opens its own log: appending, never through a symbolic link (a link put where the log
#: is must not make every hook append to its target: ELOOP, no log).
_LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def private_fd(fd: int) -> None:
    """Takes the group's and others' permission bits off the file open on ``fd`` when it is this user's
    (a ``0644`` left by an older version or a loose umask becomes ``0600``); a file another user owns is
    left as it is. One ``fstat``; a ``fchmod`` only when the file was loose. Through the descriptor, so
    no symbolic link is followed between looking and changing. Here rather than in
    :mod:`sidelight.statefile` (which uses it) because the log file needs it too, and this module
    imports nothing of sidelight's. Raises :class:`OSError`."""
    found = os.fstat(fd)
    if found.st_mode & 0o077 and found.st_uid == os.geteuid():
        os.fchmod(fd, found.st_mode & 0o7700)


def file_handler(path: str) -> logging.Handler | None:
    """A handler appending to ``path`` (created 0600, or made 0600 when it is ours and looser: see
    :func:`private_fd`; in a folder created 0700), one line per record in :data:`LOG_FORMAT`, that drops
    a record it cannot write (a full disk) instead of printing a traceback on the host's stderr
    (``None``: the file cannot be opened)."""
    import logging

    class QuietFileHandler(logging.FileHandler):
        def handleError(self, record: logging.LogRecord) -> None:
            pass

        def _open(self) -> Any:
            fd = os.open(self.baseFilename, _LOG_FLAGS, 0o600)
            return open(fd, "a", encoding=self.encoding, errors=self.errors)

    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        fd = os.open(path, _LOG_FLAGS, 0o600)
        try:
            private_fd(fd)  # a log an older version left 0644
        finally:
            os.close(fd)
        handler = QuietFileHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    return handler


def last_line_says(path: str, message: str) -> bool:
    """Whether the log file ``path`` ends with a line whose message is ``message``: a problem that
    stands (a refused state directory) is said once, not at every prompt. Reads the log's last few KiB,
    never through a symbolic link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, 8192, max(0, size - 8192))
    except OSError:
        return False
    finally:
        os.close(fd)
    last = tail.rstrip(b"\n").rpartition(b"\n")[2]
    return last.endswith(b": " + message.encode("utf-8", "replace"))


class _HookLog:
    """A log file for the ``sidelight`` loggers, attached once :mod:`logging` is imported."""

    __slots__ = ("handler", "path", "previous_level", "tried")

    def __init__(self, path: str) -> None:
        self.path = path
        self.handler: logging.Handler | None = None
        self.previous_level: int | None = None
        self.tried = False

    def attach(self, logging: Any) -> None:
        if self.tried:
            return
        self.tried = True
        # A file that cannot be opened still gets a handler that drops the records: with none, logging's
        # last resort would print them on the host's stderr.
        self.handler = file_handler(self.path) or logging.NullHandler()
        root = logging.getLogger("sidelight")
        root.addHandler(self.handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            self.previous_level = root.level
            root.setLevel(logging.INFO)

    def detach(self) -> None:
        handler = self.handler
        if handler is None:
            return
        logging: Any = sys.modules["logging"]
        root = logging.getLogger("sidelight")
        root.removeHandler(handler)
        if self.previous_level is not None:
            root.setLevel(self.previous_level)
        try:  # noqa: SIM105 (contextlib: one import more on every prompt)
            handler.close()
        except OSError:  # a full disk: what was written stays written
            pass


class hook_log:
    """Within this block, records of ``INFO`` and above from the ``sidelight`` loggers go to the file
    ``path`` (created 0600 when the first one comes: a hook that logs nothing opens no file and imports
    no :mod:`logging`). A class rather than ``contextlib.contextmanager``: :mod:`contextlib` is one import
    more on every prompt."""

    __slots__ = ("_log",)

    def __init__(self, path: str) -> None:
        self._log = _HookLog(path)

    def __enter__(self) -> None:
        _waiting.append(self._log)
        logging = sys.modules.get("logging")
        if logging is not None:
            self._log.attach(logging)

    def __exit__(self, *exc: object) -> None:
        _waiting.remove(self._log)
        self._log.detach()
