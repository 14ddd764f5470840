"""``sidelight.testing``: the conformance suite a plugin author runs against their plugin.

Two ways in:

- **Test classes.** Subclass :class:`FormatConformance` (set ``format`` and, if you like,
  ``samples`` and ``injected_lines``) and :class:`ResolverConformance` (set ``resolver``, and build
  the sessions on disk in ``make_sessions``) in your test suite; pytest collects one test per
  invariant.
- **Functions.** :func:`check_format`, :func:`check_resolver` and :func:`check_digest` return a list
  of problems (one line each, empty when all is well); ``sidelight plugins --check`` runs them.

The pytest plugin (:mod:`sidelight.testing.plugin`, registered through the ``pytest11`` entry point)
adds the fixtures ``sidelight_home`` (a throwaway HOME), ``sidelight_settings`` and
``sidelight_plugins`` (a fresh plugin manager with the built-in templates). Importing this package
loads nothing of sidelight's native core; the checks do, when they run.
"""

from __future__ import annotations

from sidelight.testing.conformance import (
    FormatConformance,
    ResolverConformance,
    check_digest,
    check_format,
    check_plugins,
    check_resolver,
)

__all__ = [
    "FormatConformance",
    "ResolverConformance",
    "check_digest",
    "check_format",
    "check_plugins",
    "check_resolver",
]
