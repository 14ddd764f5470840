"""The errors sidelight raises, and the one-line messages users see.

sidelight has one error story: a failure that means the same as a Python builtin *is* that builtin
(a missing transcript raises :class:`FileNotFoundError`, a directory :class:`IsADirectoryError`, an
unreadable file :class:`PermissionError`, a bad argument :class:`ValueError`). Failures of our own are
:class:`SidelightError` subclasses that also subclass the builtin closest in meaning, so both
``except sidelight.UnknownFormatError`` and ``except ValueError`` catch them.

:func:`describe` turns any of them into the single line the CLI prints.
"""

from __future__ import annotations

import os

__all__ = [
    "InvalidCursorError",
    "NotARegularFileError",
    "SidelightError",
    "UnknownFormatError",
    "UsageError",
    "describe",
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


def describe(error: BaseException, path: str | os.PathLike[str] | None = None) -> str:
    """One line for a user: what went wrong with ``path`` and, where we can tell, what to do about it."""
    if path is None and isinstance(error, OSError) and isinstance(error.filename, str):
        path = error.filename
    where = f"{os.fspath(path)}: " if path is not None else ""
    if isinstance(error, UnknownFormatError):
        text = str(error)
        return text if error.path is not None else where + text
    if isinstance(error, FileNotFoundError):
        return f"{where}no such file; check the path"
    if isinstance(error, IsADirectoryError):
        return f"{where}is a directory; pass the transcript files (*.jsonl) inside it"
    if isinstance(error, PermissionError):
        return f"{where}permission denied; check that you may read it"
    if isinstance(error, OSError):
        reason = error.strerror or str(error) or type(error).__name__
        return f"{where}cannot read the file: {' '.join(reason.split())}"
    reason = str(error) or type(error).__name__
    return f"{where}{' '.join(reason.split())}"
