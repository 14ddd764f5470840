"""The built-in templates' ``@hookimpl``: the mark :data:`sidelight.hookimpl` (pluggy's
``HookimplMarker("sidelight")``) puts on a function, put there without importing pluggy.

A prompt hook that has only the built-in templates calls their hooks without pluggy
(:class:`sidelight.plugins.Plugins`), and so without importing it; pluggy reads this mark as its own
whenever it registers a template. Third-party plugins use :data:`sidelight.hookimpl`.
``tests/test_plugins.py`` checks that the two marks are the same.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["MARK", "PLAIN", "PROJECT", "hookimpl"]

#: pluggy's project name and the plugins' entry-point group (:data:`sidelight.hookspecs.PROJECT`).
PROJECT = "sidelight"
#: The attribute pluggy's marker sets on a hook implementation: its options.
MARK = PROJECT + "_impl"
#: The options of a bare ``@hookimpl`` (pluggy then calls the implementations newest first).
PLAIN: dict[str, object] = {
    "wrapper": False,
    "hookwrapper": False,
    "optionalhook": False,
    "tryfirst": False,
    "trylast": False,
    "specname": None,
}


def hookimpl(function: _F) -> _F:
    """Marks ``function`` as a hook implementation with pluggy's default options (what a bare
    ``@sidelight.hookimpl`` does)."""
    setattr(function, MARK, dict(PLAIN))
    return function
