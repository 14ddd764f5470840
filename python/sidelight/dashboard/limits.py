"""What keeps the dashboard answering when a local user (any process that can connect to its port,
token or not) tries to wear it out: how long a request head may take, how many connections are
served at once, how long a request may take, and what happens when the process runs out of file
descriptors all the same.

Plain Python, no web framework: :mod:`.server` applies the connection rules to uvicorn's protocol,
:mod:`.app` the deadline and the 503, :mod:`.data` the check before it lists the sessions.
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import threading
import time
from typing import Final

__all__ = [
    "HEAD_SECONDS",
    "REQUEST_SECONDS",
    "Alarm",
    "check_descriptors",
    "max_connections",
    "out_of_descriptors",
]

logger = logging.getLogger("sidelight")

#: A connection that has not sent its whole request head this long after it opened (or after its last
#: response, kept alive) is closed: a client that sends half a request holds nothing for longer.
HEAD_SECONDS: Final = 5.0
#: A request that has no answer after this long gets a 503 (its work, in a thread, is left to end on
#: its own). The event stream is exempt: it is long-lived by design, and ends when its page goes.
REQUEST_SECONDS: Final = 30.0
#: At most this many connections at once (event streams count: each open page holds one), and never
#: more than a quarter of the descriptors the process may open: the rest are for reading transcripts.
MAX_CONNECTIONS: Final = 512
#: The errors that say the process may open no more files: its own limit, or the system's.
NO_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE})
#: Running out of descriptors again after this long without is said again (a new episode).
QUIET_SECONDS: Final = 60.0


def max_connections() -> int:
    """How many connections the dashboard serves at once: :data:`MAX_CONNECTIONS`, or a quarter of the
    process's limit on open files (``ulimit -n``) when that is lower (at least 8)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // 4))


def out_of_descriptors(error: BaseException) -> bool:
    """Whether ``error`` says that no file could be opened for lack of descriptors."""
    return isinstance(error, OSError) and error.errno in NO_DESCRIPTORS


def check_descriptors() -> None:
    """Raises the :class:`OSError` (``EMFILE`` or ``ENFILE``) of a process that cannot open a file
    now: what it read meanwhile (an empty listing, a missing session) would be wrong, not missing."""
    os.close(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))


class Alarm:
    """Says once, in one warning line without a traceback, that the dashboard ran out of file
    descriptors: again only once it could open files for :data:`QUIET_SECONDS` since (a new episode).
    Thread-safe."""

    def __init__(self) -> None:
        self._last: float | None = None  # when it last ran out, while the alarm is raised
        self._lock = threading.Lock()

    def raise_(self, error: BaseException) -> None:
        """Notes that ``error`` (an ``EMFILE``) happened; the first of an episode is logged."""
        with self._lock:
            first = self._last is None
            self._last = time.monotonic()
        if first:
            reason = os.strerror(error.errno) if isinstance(error, OSError) and error.errno else str(error)
            logger.warning(
                "the dashboard is out of file descriptors (%s): requests get 503 and new connections "
                "wait until others close (said once)",
                reason,
            )

    def clear(self) -> None:
        """Notes that a file could be opened: the episode ends after :data:`QUIET_SECONDS` of those."""
        with self._lock:
            if self._last is not None and time.monotonic() - self._last >= QUIET_SECONDS:
                self._last = None
