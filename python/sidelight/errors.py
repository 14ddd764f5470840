"""The errors sidelight raises, and the one-line messages users see.

sidelight has one error story: a failure that means the same as a Python builtin *is* that builtin
(a missing transcript raises :class:`FileNotFoundError`, a directory :class:`IsADirectoryError`, an
unreadable file :class:`PermissionError`, a bad argument :class:`ValueError`). Failures of our own are
:class:`SidelightError` subclasses that also subclass the builtin closest in meaning, so both
``except sidelight.UnknownFormatError`` and ``except ValueError`` catch them.

:func:`describe` turns any of them into the single line the CLI prints.
"""

from __future__ import annotations

import errno
import os

__all__ = [
    "FileNameError",
    "InvalidCursorError",
    "NotARegularFileError",
    "SidelightError",
    "TranscriptFileError",
    "TranscriptIsADirectoryError",
    "TranscriptNotFoundError",
    "TranscriptPermissionError",
    "UnknownFormatError",
    "UsageError",
    "check_file_name",
    "describe",
    "is_utf8_name",
    "shown_path",
    "transcript_error",
]


class SidelightError(Exception):
    """Base class of every error defined by sidelight."""


class UsageError(SidelightError, ValueError):
    """What a person gave cannot be used: an option, an environment variable, a setting, a path to
    write. The command line says so in one line and exits 2, as for a wrong option."""


class NotARegularFileError(UsageError):
    """A path sidelight was asked to write is there but is no regular file (a FIFO, a device, a
    socket, or a link to one): replacing it would destroy it, writing into it could block forever."""


class UnknownFormatError(SidelightError, ValueError):
    """The transcript format is not one sidelight knows, or could not be detected from the file."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        #: The transcript the format was detected for, when there was one.
        self.path = path


class InvalidCursorError(SidelightError, ValueError):
    """A saved cursor is not one sidelight wrote (a missing field, or not a non-negative integer)."""


class FileNameError(SidelightError, OSError):
    """A file whose name is not UTF-8. Python gives such a name as a ``str`` with lone surrogates
    (``surrogateescape``); the native core takes UTF-8 paths only, so it cannot open the file. An
    :class:`OSError` (``EILSEQ``), so that whoever handles an unreadable file handles this one."""

    def __init__(self, path: str) -> None:
        super().__init__(
            errno.EILSEQ, "the file name is not UTF-8, so sidelight cannot read it; rename the file", path
        )


class TranscriptFileError(SidelightError, OSError):
    """A transcript the Python API cannot read: an :class:`OSError` (its ``errno`` and ``filename`` set)
    that is also a :class:`SidelightError`, said in one line that names the file once
    (``nope.jsonl: no such file; check the path``), as the command line says it. The builtin's message
    named it twice (``[Errno 2] no such file: nope.jsonl: 'nope.jsonl'``)."""

    def __str__(self) -> str:
        return describe(self)


class TranscriptNotFoundError(TranscriptFileError, FileNotFoundError):
    """The transcript does not exist (also a :class:`FileNotFoundError`)."""


class TranscriptIsADirectoryError(TranscriptFileError, IsADirectoryError):
    """The path is a directory, not a transcript (also an :class:`IsADirectoryError`)."""


class TranscriptPermissionError(TranscriptFileError, PermissionError):
    """The transcript may not be read (also a :class:`PermissionError`)."""


def transcript_error(error: OSError, path: str) -> OSError:
    """``error``, raised while reading the transcript ``path``, as the :class:`TranscriptFileError` of its
    kind (a :class:`FileNameError` stays as it is)."""
    if isinstance(error, TranscriptFileError | FileNameError):
        return error
    kind: type[TranscriptFileError] = TranscriptFileError
    if isinstance(error, FileNotFoundError):
        kind = TranscriptNotFoundError
    elif isinstance(error, IsADirectoryError):
        kind = TranscriptIsADirectoryError
    elif isinstance(error, PermissionError):
        kind = TranscriptPermissionError
    code = error.errno
    # The core's words name the path again ("cannot read PATH: ..."): the system's say only what failed.
    reason = os.strerror(code) if code else (error.strerror or str(error))
    filename = error.filename if isinstance(error.filename, str) else path
    converted = kind(code, reason, filename)
    converted.__cause__ = error.__cause__
    return converted


#: The errors only a write gets: a full disk, a quota, a read-only file system, a file too big.
_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def is_utf8_name(path: str) -> bool:
    """Whether the native core can take ``path`` (cheap for the usual ASCII path: a flag, no scan)."""
    if path.isascii():
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_file_name(path: str) -> str:
    """``path`` when the native core can take it; else raises :class:`FileNameError`."""
    if not is_utf8_name(path):
        raise FileNameError(path)
    return path


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as a person reads it: the bytes of a name that is not UTF-8 as ``\\xff`` escapes."""
    name = os.fspath(path)
    return name if is_utf8_name(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


def describe(error: BaseException, path: str | os.PathLike[str] | None = None) -> str:
    """One line for a user: what went wrong with ``path`` and, where we can tell, what to do about it."""
    if path is None and isinstance(error, OSError) and isinstance(error.filename, str):
        path = error.filename
    where = f"{shown_path(path)}: " if path is not None else ""
    if isinstance(error, UnknownFormatError):
        text = str(error)
        return text if error.path is not None else where + text
    if isinstance(error, FileNameError):
        return f"{where}{error.strerror}"
    if isinstance(error, FileNotFoundError):
        return f"{where}no such file; check the path"
    if isinstance(error, IsADirectoryError):
        return f"{where}is a directory; pass the transcript files (*.jsonl) inside it"
    if isinstance(error, PermissionError):
        return f"{where}permission denied; check that you may read it"
    if isinstance(error, OSError):
        reason = error.strerror or str(error) or type(error).__name__
        if error.errno in _WRITE_ERRORS:
            # Only a write fails so: say it is one, and which error (not "cannot read").
            name = errno.errorcode.get(error.errno, str(error.errno))
            return (
                f"{where}cannot write: {' '.join(reason.split())} ({name}); free some space or fix the disk"
            )
        return f"{where}cannot read the file: {' '.join(reason.split())}"
    reason = str(error) or type(error).__name__
    return f"{where}{' '.join(reason.split())}"
