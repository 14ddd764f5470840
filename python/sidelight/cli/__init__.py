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

    for name in _DEFERRED:
        _defer(name)
    _defer("urllib.parse", functions=("quote_from_bytes",))
    gc.disable()
    try:
        return run_hook(arguments, own_process=True)
    finally:
        gc.freeze()


#: Modules the hook's own process imports on first use (see :func:`_defer`): ``re`` (with ``enum``,
#: which it needs, some 3 ms, a quarter of a bare start), which ``pathlib``, ``fnmatch`` and
#: ``urllib.parse`` import, and sidelight's modules import, for patterns a prompt seldom uses
#: (:mod:`sidelight._fast.patterns`); ``ipaddress``, which ``urllib.parse`` imports for URLs with a bracketed
#: host, which a hook never parses (some 1.5 ms).
_DEFERRED = ("ipaddress", "re")


class _Deferred(type(sys)):  # type: ignore[misc]  # a module type, without importing types
    """A module imported on its first use: its first attribute looked up imports the real one and
    makes this module a copy of it."""

    __name__: str

    def __getattr__(self, name: str) -> object:
        if name == "__path__":
            # What the import system asks of a module (``from urllib.parse import x``): the stand-ins
            # are of modules, not packages.
            raise AttributeError(name)
        return getattr(self._load(), name)

    def _load(self) -> object:
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        __import__(name)
        real = sys.modules[name]
        self.__dict__.update(real.__dict__)
        return real


def _defer(name: str, functions: tuple[str, ...] = ()) -> None:
    """Imports module ``name`` on its first use rather than when a module imports it; whatever does use
    it later still gets the real module. ``functions``: names a module takes from it as it is imported
    (``pathlib`` takes ``urllib.parse.quote_from_bytes``, for ``as_uri``), given as functions that
    import it when they are called."""
    if name in sys.modules:
        return
    module = sys.modules[name] = _Deferred(name)
    for function in functions:
        setattr(module, function, _forward(module, function))
    parent, _, child = name.rpartition(".")
    if parent:
        # ``import urllib.parse`` then ``urllib.parse.x`` looks the stand-in up on its package.
        setattr(__import__(parent), child, module)


def _forward(module: _Deferred, function: str) -> object:
    def call(*args: object, **kwargs: object) -> object:
        return getattr(module._load(), function)(*args, **kwargs)

    return call
