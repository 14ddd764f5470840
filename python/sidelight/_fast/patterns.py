"""Regular expressions compiled on first use.

A prompt hook imports most of sidelight's modules to use few of their patterns, and compiling a
pattern when its module is imported costs every prompt that: compiling them all cost a hook some
10 ms, and importing :mod:`re` at all (with :mod:`enum`, which it needs) some 3 ms more of a 11 ms bare
interpreter start. A :class:`Pattern` imports :mod:`re` and compiles itself the first time it is called;
flags are written in the pattern (``(?i)``, ``(?m)``), so that defining one needs nothing of :mod:`re`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import AnyStr, Generic
else:
    from sidelight._fast._typing import Generic

    AnyStr = None  # Generic[AnyStr] takes anything at run time (sidelight._fast._typing)

__all__ = ["Pattern"]


class Pattern(Generic[AnyStr]):
    """A regular expression (``str`` or ``bytes``) compiled when first used: ``PATTERN()`` is the
    compiled pattern."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: AnyStr) -> None:
        self._source: AnyStr = source
        self._compiled: re.Pattern[AnyStr] | None = None

    def __call__(self) -> re.Pattern[AnyStr]:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile it: the same pattern either way
            import re

            compiled = self._compiled = re.compile(self._source)
        return compiled
