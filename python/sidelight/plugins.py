"""The plugin manager: built-in templates and third-party plugins, through the same hooks.

Plugins register under the entry-point group ``sidelight``. ``SIDELIGHT_PLUGINS`` (comma-separated
entry-point names) restricts which third-party plugins load; the built-in templates always do. A plugin
that fails to load is skipped with a warning; two plugins that claim one name in a family (two formats
called ``pi``, say) are an error that names both.

pluggy calls the hooks, and the hookspecs are its contract. A process with only the built-in
templates (no third-party plugin installed, none registered) is the one case it is left out of: there
each hook's implementations are the templates' functions of that name, called newest registered first
exactly as pluggy would call them, and a prompt hook imports neither pluggy nor ``inspect``. Anything
else (a plugin installed or registered, :attr:`Plugins.manager` or :meth:`Plugins.info` asked for, a
template with options pluggy would have to order) hands the hooks to pluggy's manager.

The entry points found on ``sys.path`` are kept in the state directory, keyed by the modification
times of ``sys.path``'s folders (installing or removing a distribution changes its folder's), so that
a prompt hook does not read every installed distribution's metadata on every prompt.
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from types import FunctionType, ModuleType

from sidelight import jsonio
from sidelight._hookimpl import MARK, PLAIN, PROJECT
from sidelight._record import record
from sidelight.errors import SidelightError
from sidelight.logs import get_logger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    import pluggy

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

logger = get_logger(__name__)

#: The built-in templates, registered like any plugin. Order matters for summarizers: the default comes last.
BUILTINS: tuple[str, ...] = (
    "sidelight.templates.claude_code",
    "sidelight.templates.pi",
    "sidelight.templates.codex",
    "sidelight.templates.qwen",
    "sidelight.templates.copilot",
    "sidelight.templates.gemini",
    "sidelight.templates.opencode",
    "sidelight.templates.volute",
    "sidelight.templates.hosts",
    "sidelight.templates.eventlog",
    "sidelight.templates.handoff",
    "sidelight.templates.redis_streams",
    "sidelight.templates.default",
)


class PluginConflictError(SidelightError, ValueError):
    """Two plugins claim the same name in one family of records."""


_set = object.__setattr__


@record(frozen=True)
class BrokenPlugin:
    """A plugin that could not be loaded, and why."""

    __slots__ = ("error", "name")

    name: str
    error: str

    def __init__(self, name: str, error: str) -> None:
        _set(self, "name", name)
        _set(self, "error", error)


@record(frozen=True)
class PluginInfo:
    """One registered plugin, for ``sidelight plugins``."""

    __slots__ = ("builtin", "hooks", "name", "version")

    name: str
    version: str | None
    hooks: tuple[str, ...]
    builtin: bool

    def __init__(self, name: str, version: str | None, hooks: tuple[str, ...], builtin: bool) -> None:
        _set(self, "name", name)
        _set(self, "version", version)
        _set(self, "hooks", hooks)
        _set(self, "builtin", builtin)


def _import(name: str) -> ModuleType:
    """The module ``name`` (absolute), imported: :func:`importlib.import_module` without importing
    :mod:`importlib` itself, which a prompt hook otherwise does not."""
    __import__(name)
    return sys.modules[name]


def _new_manager() -> pluggy.PluginManager:
    """pluggy's plugin manager with sidelight's hookspecs, quicker at registering modules: pluggy's
    general look-up of each name of a module (built for descriptors, slots and bound methods) costs
    some 3 ms over the nine built-in templates. A module's name that holds anything but a hookimpl is
    told apart here, with the answer pluggy would give; every other name is left to pluggy."""
    from types import MethodType

    import pluggy

    from sidelight import hookspecs

    class _PluginManager(pluggy.PluginManager):
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

    manager = _PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


#: The options of a hook implementation pluggy calls in registration order (newest first): a bare
#: ``@hookimpl``'s.
_PLAIN = PLAIN


def _plain_hooks(module: ModuleType) -> dict[str, FunctionType] | None:
    """The hook implementations of a template, by hook name, when every one is a module function with
    a bare ``@hookimpl`` (pluggy would call them in registration order); else ``None``. What pluggy
    would take for one: a routine (here: anything callable but a class) marked with a dict."""
    hooks: dict[str, FunctionType] = {}
    for name, value in vars(module).items():
        if type(value) is FunctionType:
            options = value.__dict__.get(MARK)
        elif callable(value) and not isinstance(value, type):
            try:
                options = getattr(value, MARK, None)
            except Exception:
                return None
        else:
            continue
        if not isinstance(options, dict):
            continue
        if type(value) is not FunctionType or not name.startswith("sidelight_") or options != _PLAIN:
            return None
        hooks[name] = value
    return hooks


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
        self.broken: list[BrokenPlugin] = []
        self._versions: dict[str, str | None] = {}
        self._cache: dict[str, Any] = {}
        self._manager: pluggy.PluginManager | None = None
        #: The built-in templates in registration order, with their hooks while pluggy is left out.
        self._builtins: list[tuple[str, ModuleType]] = []
        self._hooks: list[tuple[str, dict[str, FunctionType]]] | None = []
        for module_name in builtins:
            module = _import(module_name)
            self._builtins.append((module_name, module))
            hooks = _plain_hooks(module)
            if hooks is None or self._hooks is None:
                self._hooks = None
            else:
                self._hooks.append((module_name, hooks))
        self._builtin_names = {name for name, _ in self._builtins}
        if entry_points:
            if only is None and os.environ.get("SIDELIGHT_PLUGINS") is not None:
                only = [n.strip() for n in os.environ["SIDELIGHT_PLUGINS"].split(",") if n.strip()]
            chosen = None if only is None else set(only)
            installed = _entry_points(PROJECT)
            found = [ep for ep in installed if chosen is None or ep.name in chosen]
            if chosen is not None and len(found) < len(chosen):
                unknown = sorted(chosen - {ep.name for ep in installed})
                names = ", ".join(sorted(ep.name for ep in installed)) or "none"
                logger.warning(
                    "SIDELIGHT_PLUGINS names %s, which no installed plugin provides (installed: %s)",
                    ", ".join(unknown),
                    names,
                )
            if found:
                self._load_entry_points(found)
        if self._hooks is None:
            self.manager.check_pending()

    @property
    def manager(self) -> pluggy.PluginManager:
        """pluggy's plugin manager, with every plugin registered (made on first use)."""
        if self._manager is None:
            manager = _new_manager()
            for module_name, module in self._builtins:
                manager.register(module, name=module_name)
            manager.check_pending()
            self._manager = manager
            self._hooks = None
        return self._manager

    def _load_entry_points(self, found: Sequence[EntryPoint]) -> None:
        for entry_point in found:
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

    def _implementations(self, family: str) -> list[tuple[str, Any]]:
        """The implementations of ``sidelight_<family>`` with their plugins' names, in the order pluggy
        calls them: the newest registered first (third-party plugins before the built-ins)."""
        name = f"sidelight_{family}"
        if self._hooks is not None:  # the built-in templates only, without pluggy
            return [(plugin, hooks[name]) for plugin, hooks in reversed(self._hooks) if name in hooks]
        hook = getattr(self.manager.hook, name)
        return [(impl.plugin_name, impl.function) for impl in reversed(hook.get_hookimpls())]

    def _collect(self, family: str) -> dict[str, Any]:
        """The records of one family, in the order pluggy calls the plugins (the newest registered
        first, so third-party plugins come before the built-ins). A plugin whose hook raises is
        skipped with a warning; two records with one name are an error naming both plugins."""
        if family in self._cache:
            cached: dict[str, Any] = self._cache[family]
            return cached
        found: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for plugin, function in self._implementations(family):
            try:
                records = list(function() or ())
            except Exception as error:
                message = f"{type(error).__name__}: {error}"
                self.broken.append(BrokenPlugin(plugin, f"sidelight_{family}: {message}"))
                logger.warning("plugin %s: sidelight_%s failed and was skipped: %s", plugin, family, message)
                continue
            for spec in records:
                if spec.name in found:
                    raise PluginConflictError(
                        f"two plugins define the {family.rstrip('s')} {spec.name!r}: "
                        f"{owners[spec.name]} and {plugin}; uninstall one, or choose the "
                        "plugins to load with SIDELIGHT_PLUGINS"
                    )
                found[spec.name] = spec
                owners[spec.name] = plugin
        self._cache[family] = found
        return found

    def formats(self) -> Mapping[str, FormatSpec]:
        """Every format; declared and Python-written ones are registered with the native core here
        (once per process). One the core refuses is skipped with a warning, like a broken plugin."""
        found = self._collect("formats")
        if "formats:registered" not in self._cache:
            for name, spec in list(found.items()):
                if spec.layout is None and spec.decode is None:
                    continue  # read by a built-in decoder: nothing to register
                # (not FormatDeclarationError by name: importing it costs a prompt sidelight._declared,
                # and the built-in opencode format is registered here on every prompt)
                from sidelight.formats import register_format

                try:
                    register_format(spec)
                except ValueError as error:  # a FormatDeclarationError
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


@record(frozen=True)
class EntryPoint:
    """One entry point of an installed distribution: ``value`` is ``module`` or ``module:attribute``."""

    __slots__ = ("dist_info", "name", "value")

    name: str
    value: str
    dist_info: str

    def __init__(self, name: str, value: str, dist_info: str) -> None:
        _set(self, "name", name)
        _set(self, "value", value)
        _set(self, "dist_info", dist_info)

    def load(self) -> object:
        module_name, _, attribute = self.value.partition(":")
        target: object = _import(module_name.strip())
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


#: The entry points found on ``sys.path``, kept in this file of the state directory (one per ``sys.path``).
ENTRY_POINTS_FILE = "entry-points-{path}.json"
#: A folder changed this recently (seconds) may change again within its modification time's
#: granularity without that time changing: what was found in it is not kept (git's "racily clean").
_RACY_SECONDS = 2.0


def _entry_points(group: str) -> list[EntryPoint]:
    """:func:`find_entry_points`, kept in the state directory between processes.

    The key is ``sys.path`` and the modification time of each of its folders: installing, upgrading
    or removing a distribution adds or removes its ``.dist-info`` folder, which changes the time of the
    folder that holds it, and a new ``.pth`` or a changed ``PYTHONPATH`` changes ``sys.path`` itself.
    A folder changed in the last :data:`_RACY_SECONDS` is not trusted to show its next change: what is
    found then is not kept. Nor is anything kept before the state directory exists (a hook makes it
    for its log). A cache that cannot be read or written is only slower."""
    from sidelight.config import default_state_dir
    from sidelight.statefile import write_atomic

    installed = installed_key()
    folders = [folder for folder, _changed in installed]
    key: list[object] = [group, *([folder, changed] for folder, changed in installed)]
    newest = max((changed for _folder, changed in installed), default=0)
    which = zlib.crc32("\0".join(folders).encode("utf-8", "surrogateescape"))
    path = default_state_dir() / ENTRY_POINTS_FILE.format(path=f"{which:08x}")
    try:
        kept = jsonio.loads(path.read_bytes())
        if kept["key"] == key:
            return [EntryPoint(*fields) for fields in kept["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = find_entry_points(group)
    if time.time_ns() - newest > _RACY_SECONDS * 1e9 and path.parent.is_dir():
        data = {"key": key, "entry_points": [[e.name, e.value, e.dist_info] for e in found]}
        try:
            # Not durable: a cache lost to a power cut is found again.
            write_atomic(path, jsonio.dumps(data).encode("utf-8"), durable=False)
        except OSError:
            logger.debug("cannot keep the entry points in %s", path, exc_info=True)
    return found


def installed_key() -> list[tuple[str, int]]:
    """Each folder of ``sys.path`` with its modification time (``-1``: missing): it changes when a
    distribution is installed, upgraded or removed there (its ``.dist-info`` folder comes or goes). The
    entry-point cache's key, and how the watcher's hook server knows its plugins may be out of date."""
    key = []
    for entry in sys.path:
        folder = os.path.abspath(entry or ".")  # noqa: PTH100
        try:
            changed = os.stat(folder).st_mtime_ns  # noqa: PTH116
        except OSError:
            changed = -1
        key.append((folder, changed))
    return key


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
