"""The plugin manager: built-in templates and third-party plugins, through the same hooks.

Plugins register under the entry-point group ``sidelight``. ``SIDELIGHT_PLUGINS`` (comma-separated
entry-point names) restricts which third-party plugins load; the built-in templates always do. A plugin
that fails to load is skipped with a warning; two plugins that claim one name in a family (two formats
called ``pi``, say) are an error that names both.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from dataclasses import dataclass
from types import FunctionType, MethodType, ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from sidelight import hookspecs
from sidelight.errors import SidelightError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sidelight.records import (
        ChunkSummarizerSpec,
        EmbedderSpec,
        FormatSpec,
        InjectorSpec,
        ResolverSpec,
        SinkSpec,
        SummarizerSpec,
        TokenCounterSpec,
    )

__all__ = [
    "BUILTINS",
    "BrokenPlugin",
    "EntryPoint",
    "PluginConflictError",
    "PluginInfo",
    "Plugins",
    "find_entry_points",
    "get_plugins",
]

logger = logging.getLogger(__name__)

#: The built-in templates, registered like any plugin. Order matters for summarizers: the default comes last.
BUILTINS: tuple[str, ...] = (
    "sidelight.templates.claude_code",
    "sidelight.templates.pi",
    "sidelight.templates.codex",
    "sidelight.templates.volute",
    "sidelight.templates.hosts",
    "sidelight.templates.eventlog",
    "sidelight.templates.handoff",
    "sidelight.templates.redis_streams",
    "sidelight.templates.default",
)


class PluginConflictError(SidelightError, ValueError):
    """Two plugins claim the same name in one family of records."""


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """A plugin that could not be loaded, and why."""

    name: str
    error: str


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One registered plugin, for ``sidelight plugins``."""

    name: str
    version: str | None
    hooks: tuple[str, ...]
    builtin: bool


class _PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager, quicker at registering modules: every prompt hook registers the nine
    built-in templates, and pluggy's general look-up of each name of a module (built for descriptors,
    slots and bound methods) cost it some 3 ms. A module's name that holds anything but a hookimpl is
    told apart here, with the answer pluggy would give; every other name is left to pluggy."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if isinstance(plugin, ModuleType):
            namespace = vars(plugin)
            if name in namespace:
                value = namespace[name]
                if isinstance(value, FunctionType):
                    if self.project_name + "_impl" not in value.__dict__:
                        return None  # a plain function without the marker
                elif not isinstance(value, classmethod | staticmethod | MethodType):
                    return None  # a class, a module, a constant: never a hookimpl
        return super().parse_hookimpl_opts(plugin, name)


class Plugins:
    """A plugin manager with typed access to what the plugins provide.

    Tests build their own (``Plugins(entry_points=False)``) and register what they need; the process-wide
    one is :func:`get_plugins`.
    """

    def __init__(
        self,
        *,
        builtins: Iterable[str] = BUILTINS,
        entry_points: bool = True,
        only: Iterable[str] | None = None,
    ) -> None:
        self.manager: pluggy.PluginManager = _PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.broken: list[BrokenPlugin] = []
        self._versions: dict[str, str | None] = {}
        self._builtin_names: set[str] = set()
        for module_name in builtins:
            module = importlib.import_module(module_name)
            self.manager.register(module, name=module_name)
            self._builtin_names.add(module_name)
        if entry_points:
            if only is None and os.environ.get("SIDELIGHT_PLUGINS") is not None:
                only = [n.strip() for n in os.environ["SIDELIGHT_PLUGINS"].split(",") if n.strip()]
            self._load_entry_points(None if only is None else set(only))
        self.manager.check_pending()
        self._cache: dict[str, Any] = {}

    def _load_entry_points(self, only: set[str] | None) -> None:
        for entry_point in find_entry_points(hookspecs.PROJECT):
            if only is not None and entry_point.name not in only:
                continue
            if self.manager.has_plugin(entry_point.name):
                continue
            try:
                plugin = entry_point.load()
                self.manager.register(plugin, name=entry_point.name)
                self.manager.check_pending()
            except Exception as error:  # a broken plugin never breaks sidelight
                if self.manager.has_plugin(entry_point.name):
                    self.manager.unregister(name=entry_point.name)
                message = f"{type(error).__name__}: {error}"
                self.broken.append(BrokenPlugin(entry_point.name, message))
                logger.warning("plugin %s was skipped: %s", entry_point.name, message)
                continue
            self._versions[entry_point.name] = entry_point.version()

    def register(self, plugin: object, name: str | None = None) -> None:
        """Registers a plugin object or module (tests and embedding hosts)."""
        self.manager.register(plugin, name=name)
        self.manager.check_pending()
        self._cache.clear()

    def _collect(self, family: str) -> dict[str, Any]:
        """The records of one family, in the order pluggy calls the plugins (the newest registered
        first, so third-party plugins come before the built-ins). A plugin whose hook raises is
        skipped with a warning; two records with one name are an error naming both plugins."""
        if family in self._cache:
            cached: dict[str, Any] = self._cache[family]
            return cached
        found: dict[str, Any] = {}
        owners: dict[str, str] = {}
        hook = getattr(self.manager.hook, f"sidelight_{family}")
        for impl in reversed(hook.get_hookimpls()):
            try:
                records = list(impl.function() or ())
            except Exception as error:
                message = f"{type(error).__name__}: {error}"
                self.broken.append(BrokenPlugin(impl.plugin_name, f"sidelight_{family}: {message}"))
                logger.warning(
                    "plugin %s: sidelight_%s failed and was skipped: %s", impl.plugin_name, family, message
                )
                continue
            for record in records:
                if record.name in found:
                    raise PluginConflictError(
                        f"two plugins define the {family.rstrip('s')} {record.name!r}: "
                        f"{owners[record.name]} and {impl.plugin_name}; uninstall one, or choose the "
                        "plugins to load with SIDELIGHT_PLUGINS"
                    )
                found[record.name] = record
                owners[record.name] = impl.plugin_name
        self._cache[family] = found
        return found

    def formats(self) -> Mapping[str, FormatSpec]:
        """Every format; declared and Python-written ones are registered with the native core here
        (once per process). One the core refuses is skipped with a warning, like a broken plugin."""
        found = self._collect("formats")
        if "formats:registered" not in self._cache:
            from sidelight.formats import FormatDeclarationError, register_format

            for name, spec in list(found.items()):
                try:
                    register_format(spec)
                except FormatDeclarationError as error:
                    del found[name]
                    self.broken.append(BrokenPlugin(name, f"sidelight_formats: {error}"))
                    logger.warning("format %s was skipped: %s", name, error)
            self._cache["formats:registered"] = True
        return found

    def resolvers(self) -> Mapping[str, ResolverSpec]:
        return self._collect("resolvers")

    def summarizers(self) -> Mapping[str, SummarizerSpec]:
        """In the order they are asked: third-party plugins first, the built-in default last."""
        return self._collect("summarizers")

    def injectors(self) -> Mapping[str, InjectorSpec]:
        return self._collect("injectors")

    def sinks(self) -> Mapping[str, SinkSpec]:
        return self._collect("sinks")

    def token_counters(self) -> Mapping[str, TokenCounterSpec]:
        return self._collect("token_counters")

    def embedders(self) -> Mapping[str, EmbedderSpec]:
        return self._collect("embedders")

    def chunk_summarizers(self) -> Mapping[str, ChunkSummarizerSpec]:
        """In the order they are asked: third-party plugins first, the built-in ``extractive`` last."""
        return self._collect("chunk_summarizers")

    def categories(self) -> dict[str, dict[str, str]]:
        """Tool categories per native decoder, merged over the formats that use it."""
        merged: dict[str, dict[str, str]] = {}
        for spec in self.formats().values():
            merged.setdefault(spec.decoder, {}).update({k.lower(): v for k, v in spec.categories.items()})
        return merged

    def info(self) -> list[PluginInfo]:
        """Every registered plugin with the hooks it implements."""
        out = []
        for name, plugin in self.manager.list_name_plugin():
            hooks = tuple(
                sorted(
                    caller.name
                    for caller in self.manager.get_hookcallers(plugin) or ()
                    if caller.name.startswith("sidelight_")
                )
            )
            builtin = name in self._builtin_names
            version = _own_version() if builtin else self._versions.get(name)
            out.append(PluginInfo(name=name, version=version, hooks=hooks, builtin=builtin))
        return out


def _own_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sidelight")
    except PackageNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """One entry point of an installed distribution: ``value`` is ``module`` or ``module:attribute``."""

    name: str
    value: str
    dist_info: str

    def load(self) -> object:
        module_name, _, attribute = self.value.partition(":")
        target: object = importlib.import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            target = getattr(target, part)
        return target

    def version(self) -> str | None:
        """The distribution's version, from its metadata file."""
        for metadata in ("METADATA", "PKG-INFO"):
            try:
                with open(os.path.join(self.dist_info, metadata), encoding="utf-8") as file:  # noqa: PTH118, PTH123
                    for line in file:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break
            except OSError:
                continue
        return None


def find_entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` of every distribution on ``sys.path``, first one of a name wins.

    It reads the ``entry_points.txt`` files directly, as ``importlib.metadata`` does: importing that
    module costs a prompt hook some 25 ms, more than the rest of the plugin machinery together.
    """
    header = f"[{group}]"
    found: dict[str, EntryPoint] = {}
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)  # noqa: PTH208 (plain strings: this runs in every hook)
        except OSError:
            continue
        for name in sorted(names):
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            dist_info = os.path.join(folder, name)  # noqa: PTH118
            try:
                with open(os.path.join(dist_info, "entry_points.txt"), encoding="utf-8") as file:  # noqa: PTH118, PTH123
                    text = file.read()
            except OSError:
                continue
            if header not in text:
                continue
            section = None
            for raw in text.splitlines():
                line = raw.strip()
                if not line or line.startswith(("#", ";")):
                    continue
                if line.startswith("["):
                    section = line
                    continue
                if section == header and "=" in line:
                    key, value = (part.strip() for part in line.split("=", 1))
                    value = value.split("[", 1)[0].strip()  # extras are not ours to resolve
                    if key and value and key not in found:
                        found[key] = EntryPoint(key, value, dist_info)
    return list(found.values())


_plugins: Plugins | None = None


def get_plugins() -> Plugins:
    """The process-wide plugin manager, built on first use."""
    global _plugins
    if _plugins is None:
        _plugins = Plugins()
    return _plugins
