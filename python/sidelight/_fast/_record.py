"""Records that behave as dataclasses, made without making a dataclass.

A prompt hook is a process of its own on every prompt, and it imports sidelight's records each time:
``@dataclass`` writes and compiles each class's methods when the class is made, about a millisecond a
class, and the hook's imports made some thirty. A class decorated with :func:`record` is written out
instead: its fields are declared once each in three places (its annotations, in order, for readers and
type checkers; ``__slots__``, in any order; the parameters of the ``__init__`` it writes, in the
annotations' order, with their defaults),
and :func:`record` adds, without compiling anything, what ``@dataclass`` adds: ``__eq__``, ``__hash__``,
``__repr__``, ``__match_args__``, and for a frozen record ``__setattr__``/``__delattr__`` raising
:class:`dataclasses.FrozenInstanceError` and the ``__getstate__``/``__setstate__`` pickling needs.
``__dataclass_fields__`` and ``__dataclass_params__`` are made on first use, from a dataclass of the
same fields, so that :func:`dataclasses.fields`, :func:`dataclasses.replace`,
:func:`dataclasses.asdict` and :func:`dataclasses.is_dataclass` answer as they did for the dataclass
the record replaces. To a type checker, :func:`record` *is* :func:`dataclasses.dataclass`.

A field whose default is made anew for each record (``field(default_factory=dict)``) has a
:class:`Factory` as its ``__init__`` default (:data:`NEW_DICT`), which ``__init__`` replaces.

``tests/test_records.py`` checks every record against the dataclass it replaces.
"""

from __future__ import annotations

from _thread import get_ident
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import dataclass as record
    from typing import Any

__all__ = ["NEW_DICT", "Factory", "record", "replace"]


class Factory:
    """An ``__init__`` default that stands for a new value made by ``factory`` (a dataclass field's
    ``default_factory``); shown as ``<factory>`` in signatures, as a dataclass's is."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return "<factory>"


#: The default of a field that gets a new empty dict.
NEW_DICT: Any = Factory(dict)


def _frozen_error(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


class _DataclassMetadata:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of a record class, made on first use (it
    imports :mod:`dataclasses` and makes a dataclass of the same fields) and then kept on the class."""

    __slots__ = ("attribute", "cls", "eq", "frozen", "repr")

    def __init__(self, cls: type, attribute: str, *, frozen: bool, eq: bool, repr: bool) -> None:
        self.cls = cls
        self.attribute = attribute
        self.frozen = frozen
        self.eq = eq
        self.repr = repr

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        import dataclasses

        cls = self.cls
        init = cls.__dict__["__init__"]
        code = init.__code__
        positional = code.co_varnames[1 : code.co_argcount]
        keyword_only = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        given = init.__defaults__ or ()
        defaults = dict(zip(positional[len(positional) - len(given) :], given, strict=True))
        defaults.update(init.__kwdefaults__ or {})
        annotations = cls.__dict__["__annotations__"]  # noqa: RUF063 (the class's own, as a dataclass reads them)
        spec = []
        for name in (*positional, *keyword_only):
            options: dict[str, Any] = {"kw_only": name in keyword_only}
            if name in defaults:
                default = defaults[name]
                if isinstance(default, Factory):
                    options["default_factory"] = default.factory
                else:
                    options["default"] = default
            spec.append((name, annotations.get(name, "Any"), dataclasses.field(**options)))
        shadow = dataclasses.make_dataclass(
            cls.__name__, spec, frozen=self.frozen, eq=self.eq, repr=self.repr
        )
        fields = shadow.__dataclass_fields__  # type: ignore[attr-defined]
        params = shadow.__dataclass_params__  # type: ignore[attr-defined]
        type.__setattr__(cls, "__dataclass_fields__", fields)
        type.__setattr__(cls, "__dataclass_params__", params)
        return fields if self.attribute == "__dataclass_fields__" else params


if not TYPE_CHECKING:

    def record(cls=None, /, *, frozen=False, eq=True, repr=True):
        """Adds to ``cls`` (a class with ``__slots__`` naming its fields and an ``__init__`` setting
        them) what ``@dataclass`` with the same options and ``slots=True`` adds; see the module."""

        def wrap(cls):
            _complete(cls, frozen=frozen, eq=eq, repr=repr)
            return cls

        return wrap if cls is None else wrap(cls)


def _complete(cls: type[Any], *, frozen: bool, eq: bool, repr: bool) -> None:
    namespace = cls.__dict__
    slots = namespace["__slots__"]
    names = tuple(name for name in namespace["__annotations__"] if name in slots)
    get = attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),))

    def add(name: str, value: object) -> None:
        if name not in namespace:
            type.__setattr__(cls, name, value)

    type.__setattr__(cls, "__record_fields__", names)
    add("__match_args__", names)
    if repr:
        running: set[tuple[int, int]] = set()

        def __repr__(self: Any) -> str:
            key = (id(self), get_ident())
            if key in running:
                return "..."
            running.add(key)
            try:
                shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, get(self), strict=True))
            finally:
                running.discard(key)
            return f"{type(self).__qualname__}({shown})"

        add("__repr__", __repr__)
    if eq:

        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return bool(get(self) == get(other))
            return NotImplemented

        add("__eq__", __eq__)
        if "__hash__" not in namespace or namespace["__hash__"] is None:
            if frozen:

                def __hash__(self: Any) -> int:
                    return hash(get(self))

                type.__setattr__(cls, "__hash__", __hash__)
            else:
                type.__setattr__(cls, "__hash__", None)
    if frozen:

        def __setattr__(self: Any, name: str, value: object) -> None:
            if type(self) is cls or name in names:
                raise _frozen_error(f"cannot assign to field {name!r}")
            super(cls, self).__setattr__(name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is cls or name in names:
                raise _frozen_error(f"cannot delete field {name!r}")
            super(cls, self).__delattr__(name)

        def __getstate__(self: Any) -> list[Any]:
            return list(get(self))

        def __setstate__(self: Any, state: list[Any]) -> None:
            for name, value in zip(names, state, strict=False):
                object.__setattr__(self, name, value)

        type.__setattr__(cls, "__setattr__", __setattr__)
        type.__setattr__(cls, "__delattr__", __delattr__)
        add("__getstate__", __getstate__)
        add("__setstate__", __setstate__)
    for attribute in ("__dataclass_fields__", "__dataclass_params__"):
        type.__setattr__(cls, attribute, _DataclassMetadata(cls, attribute, frozen=frozen, eq=eq, repr=repr))


def replace(obj: Any, /, **changes: Any) -> Any:
    """:func:`dataclasses.replace`, quicker for a record (it needs no ``__dataclass_fields__``); any
    other dataclass goes to :func:`dataclasses.replace`."""
    names = getattr(type(obj), "__record_fields__", None)
    if names is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for name in names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)
