"""The watcher's eyes: watchdog's observer (inotify, or polling for network file systems and WSL) over the
folders the resolvers name, and its handler, which only marks paths dirty and wakes the watcher's
worker (no I/O, no parsing: a burst of writes costs one cheap Python call per event). Events are only
hints: the worker's stat passes find what they miss.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver, ObservedWatch

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = ["JOIN_TIMEOUT", "Roots"]

logger = logging.getLogger(__name__)

#: How long to wait for a thread to finish when stopping.
JOIN_TIMEOUT = 10.0


class _Handler:
    """The watchdog handler: marks the event's paths dirty and wakes the worker. Nothing else."""

    def __init__(self, mark: Callable[[str, str | None], None], placed: Callable[[], None]) -> None:
        self._mark = mark
        self._placed = placed

    def dispatch(self, event: FileSystemEvent) -> None:
        src = event.src_path
        dest = event.dest_path
        if event.event_type != "modified":
            self._placed()  # created, deleted, moved: the listing may have changed
        self._mark(
            src if isinstance(src, str) else os.fsdecode(src),
            (dest if isinstance(dest, str) else os.fsdecode(dest)) if dest else None,
        )


class Roots:
    """The observer and its watches, one per root folder the resolvers name (a root inside another is
    covered by the outer one's recursive watch). ``mark(path, dest)`` is called for each event's paths;
    ``placed()`` for each file created, deleted or moved (the listing may have changed)."""

    def __init__(
        self,
        settings: Settings,
        plugins: Plugins,
        mark: Callable[[str, str | None], None],
        placed: Callable[[], None],
        *,
        polling: bool = False,
        poll_interval: float = 1.0,
    ) -> None:
        self.settings = settings
        self.plugins = plugins
        self.polling = polling
        self.poll_interval = poll_interval
        self._mark = mark
        self._placed = placed
        self.observer: BaseObserver | None = None
        #: Watched folder (real path) -> its watch and the folder's identity when it was made.
        self.watches: dict[str, tuple[ObservedWatch, tuple[int, int] | None]] = {}

    def start(self) -> None:
        """Make the observer (polling or native) and start its thread; nothing is watched yet."""
        if self.polling:
            from watchdog.observers.polling import PollingObserver

            self.observer = PollingObserver(timeout=self.poll_interval)
        else:
            from watchdog.observers import Observer

            self.observer = Observer()
        self.observer.start()

    def covered(self) -> bool:
        """Whether every root a resolver names is inside a watched folder (``False`` as well when a
        resolver fails to name its roots)."""
        watched = tuple(name.rstrip("/") + "/" for name in list(self.watches))
        for resolver in self.plugins.resolvers().values():
            try:
                roots = [os.path.realpath(root) + "/" for root in resolver.roots(self.settings)]
            except Exception:
                return False
            if any(not root.startswith(watched) for root in roots):
                return False
        return True

    def schedule(self, modify_events: bool) -> None:
        """Watch every root the resolvers name that exists and is not watched yet; drop vanished ones.
        New watches report writes when ``modify_events``."""
        observer = self.observer
        if observer is None:
            return
        wanted: dict[str, None] = {}
        for resolver in self.plugins.resolvers().values():
            try:
                roots: Iterable[Path] = list(resolver.roots(self.settings))
            except Exception:
                logger.warning("resolver %s failed to name its folders", resolver.name, exc_info=True)
                continue
            for root in roots:
                with contextlib.suppress(OSError):
                    if root.is_dir():
                        wanted[os.path.realpath(root)] = None
        # A root inside another one is already covered by the recursive watch of the outer one.
        chosen = [r for r in wanted if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in wanted)]
        for watched, (_watch, identity) in list(self.watches.items()):
            # Gone, or replaced by a new folder of the same name (its old watch sees nothing).
            if watched not in chosen or _identity(watched) != identity:
                self.unwatch(watched)
                logger.info("no longer watching %s", watched)
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
        )

        event_filter: list[type[FileSystemEvent]] = [
            FileCreatedEvent,
            FileDeletedEvent,
            FileMovedEvent,
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
        ]
        if modify_events:
            event_filter.append(FileModifiedEvent)
        for name in chosen:
            if name in self.watches:
                continue
            try:
                identity = _identity(name)
                watch = observer.schedule(
                    _Handler(self._mark, self._placed),  # type: ignore[arg-type]
                    name,
                    recursive=True,
                    event_filter=event_filter,
                )
                self.watches[name] = (watch, identity)
            except OSError as error:
                hint = ""
                if error.errno in (errno.ENOSPC, errno.EMFILE):
                    hint = " (inotify limits reached: raise fs.inotify.max_user_watches, or use --polling)"
                logger.warning("cannot watch %s: %s%s; the stat pass still covers it", name, error, hint)
            except Exception as error:
                logger.warning("cannot watch %s: %s; the stat pass still covers it", name, error)
            else:
                logger.info("watching %s%s", name, " (polling)" if self.polling else "")

    def unwatch(self, watched: str) -> None:
        watch, _identity = self.watches.pop(watched)
        observer = self.observer
        if observer is not None:
            with contextlib.suppress(Exception):
                observer.unschedule(watch)

    def unwatch_all(self) -> None:
        for watched in list(self.watches):
            self.unwatch(watched)

    def shutdown(self) -> None:
        """Stop and join the observer's threads (watchdog's emitters and its inotify reader)."""
        observer = self.observer
        if observer is None:
            return
        self.observer = None
        try:
            if observer.is_alive():
                observer.stop()
                observer.join(JOIN_TIMEOUT)
            else:
                # Never started: its emitters and inotify reader thread still need stopping.
                observer.unschedule_all()
        except Exception:
            logger.warning("the file observer did not stop cleanly", exc_info=True)
        inotify = getattr(observer, "_inotify_fd", None)
        if inotify is not None:
            # watchdog >= 6 reads inotify in a thread of its own, started with the observer.
            with contextlib.suppress(Exception):
                if inotify.is_alive():
                    inotify.stop()
                    inotify.join(JOIN_TIMEOUT)
        self.watches.clear()


def _identity(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)  # noqa: PTH116
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)
