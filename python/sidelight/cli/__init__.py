"""The ``sidelight`` command line: :func:`main`.

``sidelight hook HOST`` runs on every prompt of every session, so it is answered before anything else is
imported: this module imports nothing of its own at load time (the parser and the commands live in
:mod:`sidelight.cli.parser`), and the hook asks a running watcher first (:mod:`sidelight.warm`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["hook"] and not {"-h", "--help"} & set(arguments[1:]):
        # The prompt hook's fast path: no argument parser, no plugin commands, always exit 0.
        from sidelight.cli.hooks import run_hook

        if argv is not None:  # called from Python: the process is the caller's
            return run_hook(arguments[1:])
        return _hook_process(arguments[1:])
    from sidelight.cli.parser import run_command

    return run_command(argv)


def build_parser() -> argparse.ArgumentParser:
    """The whole ``sidelight`` parser, every command's included."""
    from sidelight.cli.parser import build_parser as build

    return build()


def _hook_process(arguments: Sequence[str]) -> int:
    """``sidelight hook`` as its own process, which lives for one prompt: the garbage collector is off
    while it runs, and what is alive at its end is frozen, so that the interpreter's last collection
    at exit skips it. Collecting cycles among the thousands of objects the hook's imports create, and
    then once more over all of them at exit, cost every prompt some 15 ms, to free memory that the
    process gives back a moment later anyway."""
    import gc

    from sidelight.cli.hooks import run_hook

    _defer("ipaddress")
    gc.disable()
    try:
        return run_hook(arguments, own_process=True)
    finally:
        gc.freeze()


class _Deferred(type(sys)):  # type: ignore[misc]  # a module type, without importing types
    """A module imported on its first use: its first attribute looked up imports the real one and
    makes this module a copy of it."""

    __name__: str

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = __import__(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


def _defer(name: str) -> None:
    """Imports module ``name`` on its first use rather than when a module imports it. For
    ``ipaddress`` in the hook's own process: ``pathlib`` imports ``urllib.parse``, which imports
    ``ipaddress`` (some 1.5 ms, a tenth of a bare start) for URLs with a bracketed host, which a hook
    never parses; whatever does use it later still gets the real module."""
    if name not in sys.modules:
        sys.modules[name] = _Deferred(name)
