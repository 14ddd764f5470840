"""The watcher's options (``sidelight watch``'s flags, their environment variables and config keys), which
``sidelight status`` and the dashboard read too (the idle timeout judges every session's state)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sidelight.config import Settings

__all__ = ["OPTION_ENV", "WatchOptions", "watch_options"]


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """The watcher's settings: command-line flag, else environment variable, else the config file's
    top-level key of the same name (``idle_timeout = "30m"``), else the default."""

    idle_timeout: float = 1800.0
    max_duration: float = 8 * 3600.0
    polling: bool = False
    debounce: float = 0.25
    reconcile: float = 10.0
    archive_transcripts: bool = False
    #: Find appends with a stat pass every ``debounce`` rather than one inotify event per write
    #: (``None``: choose by the number of live sessions, see :data:`AUTO_STAT_APPENDS`).
    stat_appends: bool | None = None


#: Option name -> environment variable.
OPTION_ENV = {
    "idle_timeout": "SIDELIGHT_IDLE_TIMEOUT",
    "max_duration": "SIDELIGHT_MAX_DURATION",
    "polling": "SIDELIGHT_POLLING",
    "debounce": "SIDELIGHT_DEBOUNCE",
    "reconcile": "SIDELIGHT_RECONCILE",
    "archive_transcripts": "SIDELIGHT_ARCHIVE_TRANSCRIPTS",
    "stat_appends": "SIDELIGHT_STAT_APPENDS",
}


def watch_options(
    settings: Settings, env: Mapping[str, str] | None = None, **given: str | float | bool | None
) -> WatchOptions:
    """The options from ``given`` (``None``: not given), the environment and ``settings.extra``.

    Raises :class:`sidelight.config.ConfigError` for a duration that does not parse (``90s``, ``30m``,
    ``8h`` and ``250ms`` do).
    """
    from sidelight.config import parse_duration

    env = os.environ if env is None else env
    defaults = WatchOptions()
    values: dict[str, Any] = {}
    for name, variable in OPTION_ENV.items():
        value: Any = given.get(name)
        if value is None:
            value = env.get(variable)
        if value is None:
            value = settings.extra.get(name)
        if value is None:
            continue
        if name == "stat_appends":
            values[name] = _tristate(name, value)
        elif isinstance(getattr(defaults, name), bool):
            values[name] = _flag(name, value)
        else:
            # debounce may be 0 (no settling); the others are periods, and 0 would spin.
            positive = name in ("idle_timeout", "max_duration", "reconcile")
            values[name] = parse_duration(value, name.replace("_", "-"), above=positive)
    return WatchOptions(**values)


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _flag(name: str, value: object) -> bool:
    """``True`` or ``False``; any other word is an error, not off (``SIDELIGHT_POLLING=maybe``)."""
    from sidelight.config import ConfigError

    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ConfigError(f"{name.replace('_', '-')} must be true or false, not {value!r}")


def _tristate(name: str, value: object) -> bool | None:
    """``True``, ``False``, or ``None`` for ``auto``."""
    from sidelight.config import ConfigError

    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word == "auto":
        return None
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ConfigError(f"{name.replace('_', '-')} must be true, false or auto, not {value!r}")
