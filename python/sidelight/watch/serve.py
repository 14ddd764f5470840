"""The watcher's hook server: the warm path's other side (the protocol in :mod:`sidelight.warm`).

A hook that finds ``<state dir>/hook.sock`` sends its host's payload there, and the watcher answers it
with the same composer, settings and cursor store the hook would have used itself
(:func:`sidelight.features.hook.answer_hook`): the answer is the one the hook would have printed, and the
cursors
move once, whoever answered. What the watcher saves a hook is the start-up (the imports, the plugins)
and the listing of every session, made again only when its file events say a transcript was created,
deleted or moved.

It declines, and the hook answers itself, when the hook is of another build or runs with other settings
or agent folders (:func:`sidelight.warm.environment`, with the resolvers' ``variables``), when a
distribution was installed or removed since it started (a plugin may have come or gone:
:func:`sidelight.plugins.installed_key`), or when it is busy with :data:`CONCURRENCY` hooks already. Each
request has a thread of its own; a client that sends nothing for :data:`READ_TIMEOUT` is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
import time
from typing import TYPE_CHECKING, Any, Final

from sidelight.agents import HOST_VARIABLES
from sidelight.config import Settings
from sidelight.engine.discovery import list_sessions, serving
from sidelight.features.hook import answer_hook, log_handler
from sidelight.plugins import installed_key
from sidelight.statefile import private_dir
from sidelight.statelayout import HOOK_SOCKET
from sidelight.warm import (
    WATCHER_MARGIN,
    Reader,
    build_id,
    decode_header,
    decode_request,
    encode_answer,
    environment,
    short_address,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = ["CONCURRENCY", "LISTING_KEPT", "HookServer"]

logger = logging.getLogger(__name__)

#: Hooks answered at once; more are declined (and answer themselves) rather than queued behind them.
CONCURRENCY: Final = 4
#: How long a connected hook may take to send its request, or to say it still wants the answer.
READ_TIMEOUT: Final = 2.0
#: How long a listing of the sessions serves the hooks while no file was created, deleted or moved: the
#: names in it (transcript titles, read once per listing) are at most this old.
LISTING_KEPT: Final = 60.0
#: The threads that answer hooks are named so; the hook log takes only their records.
THREAD_PREFIX: Final = "sidelight-hook"


class HookServer:
    """Serves hooks on ``<state dir>/hook.sock`` until :meth:`stop`.

    ``placements`` returns a number that moves whenever a transcript may have been created, deleted or
    moved under the resolvers' roots (the watcher counts its file events): while it stands still, a
    listing of the sessions is used again for :data:`LISTING_KEPT` seconds (without it, or when it
    returns ``None``, every hook lists them). ``environ`` is the environment hooks must match (default:
    this process's); ``on_answer`` is called after each answer (the watcher writes its snapshot then).
    """

    def __init__(
        self,
        settings: Settings,
        plugins: Plugins,
        *,
        placements: Callable[[], int | None] | None = None,
        environ: dict[str, str] | None = None,
        on_answer: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        self.plugins = plugins
        self.placements = placements
        self.on_answer = on_answer
        self.path: Path = settings.state_dir / HOOK_SOCKET
        #: The variables compared with a hook's besides ``SIDELIGHT_*``: the built-in agents' and the
        #: resolvers' own (a plugin agent's folder).
        self.variables = HOST_VARIABLES.union(v for r in plugins.resolvers().values() for v in r.variables)
        self.environment = environment(os.environ if environ is None else environ, self.variables)
        self.build = build_id()
        self.installed = installed_key()
        self.answered = 0
        self.declined = 0
        self.last_answered: float | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(CONCURRENCY)
        #: The hooks being answered (their cursors not yet moved), under a condition :meth:`settle` waits on.
        self._active = 0
        self._idle = threading.Condition()
        self._counter_lock = threading.Lock()
        self._log: logging.Handler | None = None
        self._sequence = 0
        #: The last listing: (placements when it was made, the settings, when (monotonic), the sessions).
        self._listed: tuple[int, Settings, float, list[Session]] | None = None

    def start(self) -> None:
        """Bind the socket (replacing a dead watcher's: the caller holds the state directory's lock)
        and start answering. Raises ``OSError`` when the socket cannot be made."""
        # Only this user may reach the socket: the directory is the gate (a socket's own mode is not
        # honoured everywhere).
        private_dir(self.settings.state_dir)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            address, fd = short_address(os.fspath(self.path))
            try:
                listener.bind(address)
            finally:
                if fd is not None:
                    os.close(fd)
            os.chmod(self.path, 0o600)
            listener.listen(64)
            listener.settimeout(0.25)
        except BaseException:
            listener.close()
            raise
        self._listener = listener
        handler = log_handler(self.settings)
        if handler is not None:
            handler.addFilter(lambda record: (record.threadName or "").startswith(THREAD_PREFIX))
            logging.getLogger("sidelight").addHandler(handler)
            self._log = handler
        self._thread = threading.Thread(target=self._accept, name="sidelight-hook-server", daemon=True)
        self._thread.start()
        logger.info("answering hooks on %s", self.path)

    def stop(self) -> None:
        """Stop accepting, remove the socket, and wait for the hooks being answered (up to
        :data:`READ_TIMEOUT` each): a hook exits before its cursors move, and they move before this
        returns (the protocol in :mod:`sidelight.warm`)."""
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.lstat(self.path).st_mode):
                    os.unlink(self.path)
        # The hooks being answered finish (a slot each) before the log closes.
        for _ in range(CONCURRENCY):
            self._slots.acquire(timeout=READ_TIMEOUT)
        if self._log is not None:
            logging.getLogger("sidelight").removeHandler(self._log)
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until no hook is being answered: every answer given has its cursors moved (a hook exits
        before they do). ``False``: one still was after ``timeout`` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._active == 0, timeout)

    def stats(self) -> dict[str, Any]:
        """For the watcher's status snapshot (``sidelight status``)."""
        return {
            "socket": os.fspath(self.path),
            "answered": self.answered,
            "declined": self.declined,
            "last_answered": self.last_answered,
        }

    # -- the threads ---------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            listener = self._listener
            if listener is None:
                return
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError as error:
                if self._stopping.is_set():
                    return
                logger.warning("the hook socket failed (%s); hooks answer themselves", error)
                return
            if not self._slots.acquire(blocking=False):
                self._decline(connection, "busy")
                connection.close()
                continue
            self._sequence += 1
            with self._idle:
                self._active += 1
            worker = threading.Thread(
                target=self._serve, args=(connection,), name=f"{THREAD_PREFIX}-{self._sequence}", daemon=True
            )
            try:
                worker.start()
            except RuntimeError:  # no thread to be had: the hook answers itself, and settle() still ends
                self._decline(connection, "busy")
                connection.close()
                with self._idle:
                    self._active -= 1
                    self._idle.notify_all()
                self._slots.release()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with connection:
                self._converse(connection)
        except Exception:
            logger.warning("a hook request failed", exc_info=True)
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()
            self._slots.release()

    def _converse(self, connection: socket.socket) -> None:
        reader = Reader(connection)
        deadline = time.monotonic() + READ_TIMEOUT
        try:
            meta_length, payload_length = decode_header(reader.line(deadline))
            request = decode_request(
                reader.exactly(meta_length, deadline), reader.exactly(payload_length, deadline)
            )
        except (OSError, ValueError) as error:
            logger.debug("a malformed hook request: %s", error)
            self._decline(connection, "malformed request")
            return
        if request.build != self.build:
            self._decline(connection, "another build of sidelight")
            return
        if environment(dict(request.environment), self.variables) != self.environment:
            self._decline(connection, "another environment")
            return
        if installed_key() != self.installed:
            # A plugin may have come or gone: the hook loads the plugins as they are now.
            self._decline(connection, "distributions installed or removed since the watcher started")
            return
        try:
            settings = Settings.load()
        except Exception as error:
            self._decline(connection, f"settings: {error}")
            return
        connection.sendall(b"A %.3f\n" % (settings.time_budget + WATCHER_MARGIN))
        # Nothing moves until the hook says it still wants the answer: one that gave up waiting runs
        # in-process, and must find the cursors where they were.
        if not _said_go(reader):
            return

        def deliver(output: str | None) -> bool:
            # The cursors move only once the hook has printed the answer and said so (``K``): a hook
            # killed before that leaves the news for its next prompt.
            body = encode_answer(output or "")
            # Counted before it is sent: a hook that has its answer finds it counted.
            with self._counter_lock:
                self.answered += 1
                self.last_answered = time.time()
            connection.sendall(b"%d\n%s" % (len(body), body))
            return _said(reader, b"K")

        # The hook exits once it said K; the cursors move after that, under the session's reading lock,
        # which the next prompt of the session waits for (the protocol in sidelight.warm).
        with serving(self._listing(settings), request.cwd):
            answer_hook(request.host, request.payload, settings, self.plugins, deliver=deliver)
        if self.on_answer is not None:
            self.on_answer()

    def _listing(self, settings: Settings) -> Callable[[], list[Session]] | None:
        """The sessions as a listing made since the last file placement shows them (made now when there
        is none); ``None``: the hook lists them itself."""
        placements = self.placements
        if placements is None:
            return None
        seen = placements()
        if seen is None:
            return None
        listed = self._listed
        now = time.monotonic()
        if listed is None or listed[0] != seen or listed[1] != settings or now - listed[2] > LISTING_KEPT:
            # Read before listing: a file placed while it lists moves the count, and the next hook lists
            # again.
            listed = (seen, settings, now, list_sessions(settings, self.plugins))
            self._listed = listed
        sessions = listed[3]
        return lambda: sessions

    def _decline(self, connection: socket.socket, reason: str) -> None:
        with self._counter_lock:
            self.declined += 1
        with contextlib.suppress(OSError):
            connection.sendall(b"D %s\n" % reason.encode("utf-8", "replace")[:200])


def _said_go(reader: Reader) -> bool:
    """Whether the hook's next byte is ``G`` (its go-ahead); it closing, or saying nothing in time, is
    a no."""
    return _said(reader, b"G")


def _said(reader: Reader, word: bytes) -> bool:
    """Whether the hook's next byte is ``word``; it closing, or saying nothing in time, is a no."""
    try:
        return reader.exactly(1, time.monotonic() + READ_TIMEOUT) == word
    except (OSError, ValueError):
        return False
