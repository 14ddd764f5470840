"""What the prompt hook's modules take from :mod:`typing` at run time, made without importing it.

A prompt hook is a process of its own on every prompt, and importing :mod:`typing` costs it some 3 ms
(a tenth of its own work). Its modules import ``typing`` for type checkers only (``TYPE_CHECKING =
False``, which mypy reads as true) and take the few names a class statement or a decorator needs at
run time from here:

- :class:`NamedTuple`: a class statement with annotated fields (and defaults, methods, a docstring)
  makes the :func:`collections.namedtuple` :class:`typing.NamedTuple` would make;
- :class:`Generic`: a base that takes and ignores its parameters (``SharedState[T]``);
- :func:`overload`: leaves the function as it is (the last definition, the implementation, wins).

To a type checker these names are :mod:`typing`'s (the modules import them from there under
``TYPE_CHECKING``). ``tests/test_hook_imports.py`` checks that a prompt hook does not import ``typing``.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["Generic", "NamedTuple", "overload"]

#: Names of a class body that are not its own attributes (typing.NamedTuple leaves them out too).
_SPECIAL = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__", "__classcell__"})


class _NamedTupleMeta(type):
    def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if not bases:  # NamedTuple itself
            return super().__new__(cls, name, bases, namespace)
        fields = list(namespace.get("__annotations__", {}))
        defaults = [namespace[field] for field in fields if field in namespace]
        if defaults and any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows a field with one")
        made = namedtuple(name, fields, defaults=defaults, module=namespace.get("__module__"))  # type: ignore[misc]
        made.__qualname__ = namespace.get("__qualname__", name)
        for key, value in namespace.items():
            if key in _SPECIAL or key in fields:
                continue
            if key in made._fields:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            setattr(made, key, value)
        made.__annotations__ = dict(namespace.get("__annotations__", {}))
        return made


class NamedTuple(metaclass=_NamedTupleMeta):
    """The base of a named tuple class written as a class statement (see the module's docstring)."""


class Generic:
    """A generic base class: ``Generic[T]`` is :class:`Generic`, and ``Subclass[X]`` is ``Subclass``."""

    __slots__ = ()

    def __class_getitem__(cls, parameters: object) -> type:
        return cls


def overload(function: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`typing.overload` for a module that runs without it: the implementation follows and wins."""
    return function
