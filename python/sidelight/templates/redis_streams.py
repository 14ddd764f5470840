"""Built-in plugin ``redis-streams``: fleets of machines through Redis Streams (``docs/fleet.md``).

It is active only when a fleet is configured (``SIDELIGHT_REDIS_URL`` or ``redis_url`` in the config
file); otherwise it costs nothing and never imports the ``redis`` client.

* The **sink** ``redis-streams``: when a watcher starts, it starts a
  :class:`sidelight.features.fleet.streams.Publisher`
  with the watcher's settings and plugins; each pass of the watcher, ``emit_many`` notes which
  sessions have news (no I/O) and the publisher's thread publishes them; when the watcher stops, the
  publisher makes a last attempt and its thread is joined.
* The **resolver** ``redis-streams``: lists no local session; its ``remote_activity`` gives the prompt
  hook what the siblings on the fleet's other machines did
  (:func:`sidelight.features.fleet.streams.remote_activity`).
"""

from __future__ import annotations

from _thread import allocate_lock

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.records import ResolverSpec, SinkSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from sidelight.config import Settings
    from sidelight.features.fleet import streams as fleet
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, Session, SessionActivity, SinkEvent

__all__ = ["current_publisher", "emit", "emit_many", "start", "stop"]

logger = get_logger(__name__)

#: The sink's and the resolver's name (``sidelight.features.fleet.streams.RESOLVER``: this module loads
#: with every
#: hook,
#: and imports the fleet's machinery only when a fleet is configured).
NAME = "redis-streams"

_lock = allocate_lock()  # threading.Lock, without importing threading on every prompt
_publisher: fleet.Publisher | None = None


def current_publisher() -> fleet.Publisher | None:
    """The publisher of the running watcher (``None``: no watcher, or no fleet configured)."""
    return _publisher


def start(settings: Settings, plugins: Plugins) -> None:
    """Starts publishing for a watcher that starts (nothing without a fleet)."""
    global _publisher
    if not settings.redis_url:
        return
    from sidelight.features.fleet import streams as fleet

    try:
        config = fleet.FleetConfig.of(settings)
    except Exception as error:  # a broken setting never stops the watcher: it watches unpublished
        logger.warning("fleet: not publishing: %s", error)
        return
    if config is None:
        return
    publisher = fleet.Publisher(settings, plugins, config)
    with _lock:
        previous, _publisher = _publisher, publisher
    if previous is not None:
        previous.stop()
    publisher.start()


def stop() -> None:
    """Stops publishing: a last attempt for what is pending, then the publisher's thread is joined."""
    global _publisher
    with _lock:
        publisher, _publisher = _publisher, None
    if publisher is not None:
        publisher.stop()


def emit(event: SinkEvent) -> None:
    """Notes that ``event``'s session has news."""
    publisher = _publisher
    if publisher is not None:
        publisher.note((event.session,))


def emit_many(events: Sequence[SinkEvent]) -> None:
    """Notes which sessions of a watcher pass have news (no I/O: the publisher's thread sends)."""
    publisher = _publisher
    if publisher is not None:
        publisher.note([event.session for event in events])


def _remote_activity(
    current: Session, settings: Settings, deadline: float, commit: bool
) -> list[SessionActivity]:
    """:func:`sidelight.features.fleet.streams.remote_activity`, for a configured fleet only."""
    if not settings.redis_url:
        return []
    from sidelight.features.fleet import streams as fleet

    return fleet.remote_activity(current, settings, deadline, commit)


def _no_sessions(settings: Settings) -> Iterator[Session]:
    return iter(())


def _no_current(event: HostEvent, settings: Settings) -> Session | None:
    return None


@hookimpl
def sidelight_sinks() -> Iterator[SinkSpec]:
    yield SinkSpec(
        name=NAME,
        emit=emit,
        emit_many=emit_many,
        start=start,
        stop=stop,
        description="publishes session activity to Redis Streams (when redis_url is set)",
    )


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield ResolverSpec(
        name=NAME,
        list_sessions=_no_sessions,
        current=_no_current,
        remote_activity=_remote_activity,
        description="siblings on the fleet's other machines, from Redis Streams (when redis_url is set)",
    )
