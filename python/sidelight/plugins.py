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

A built-in template is imported when something first asks for what it provides (:data:`_PROVIDES`):
a record by name, a whole family, or, for a prompt, the resolvers that can know a session there (the
ones whose folders exist, and the hook's own host's: the index of the built-in agents,
:mod:`sidelight.agents`, says which without importing them). A prompt in a HOME with one agent's folder
thus imports neither the other agents' templates nor the watcher's sinks. pluggy's manager, once made,
has every template.

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

from sidelight import records
from sidelight._fast import jsonio
from sidelight._fast._hookimpl import MARK, PLAIN, PROJECT
from sidelight._fast._record import record
from sidelight._fast.logs import get_logger
from sidelight.agents import BUILTIN_AGENTS, agent_of, may_name_current
from sidelight.errors import SidelightError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
    from typing import Any

    import pluggy

    from sidelight.config import Settings
    from sidelight.records import (
        AgentSpec,
        ChunkSummarizerSpec,
        EmbedderSpec,
        FormatSpec,
        InjectorSpec,
        InstallerSpec,
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

#: The built-in templates that are not agents, registered after the agents (:mod:`sidelight.agents`),
#: each with what it provides: its hooks' families, each with the names of its records (``None``: the
#: names are not listed, so any ask of that family imports it). A template is imported when one of them
#: is asked for by name, or a whole family it has a hook in; one without an entry is imported with the
#: manager. ``tests/test_plugins.py`` checks this against the modules. Order matters for summarizers:
#: the default comes last.
_TEMPLATES: dict[str, dict[str, tuple[str, ...] | None]] = {
    "sidelight.templates.eventlog": {"sinks": ("jsonl-log",)},
    "sidelight.templates.handoff": {
        "token_counters": ("estimate",),
        "embedders": ("hashed-ngrams",),
        "chunk_summarizers": ("extractive",),
        "sinks": ("handoff",),
    },
    "sidelight.templates.redis_streams": {"sinks": ("redis-streams",), "resolvers": ("redis-streams",)},
    "sidelight.templates.installers": {"installers": ("service",)},
    "sidelight.templates.default": {"summarizers": ("default",)},
}

#: A built-in template that is not an agent and whose resolver finds sessions only under some settings:
#: what a prompt checks instead of importing it (as an agent's ``sessions_here``).
_TEMPLATE_SESSIONS_HERE: dict[str, Callable[[Settings], bool]] = {
    "sidelight.templates.redis_streams": lambda settings: bool(settings.redis_url),
}

#: The built-in templates, registered like any plugin: the agents', then the others.
BUILTINS: tuple[str, ...] = (*(agent.module for agent in BUILTIN_AGENTS), *_TEMPLATES)

#: What each built-in template provides (the agents' from their index, :mod:`sidelight.agents`); a
#: built-in format's decoder is its name.
_PROVIDES: dict[str, Mapping[str, tuple[str, ...] | None]] = {
    **{agent.module: agent.provides for agent in BUILTIN_AGENTS},
    **_TEMPLATES,
}


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
        #: The built-in templates in registration order, each module once imported (``None`` before:
        #: the ones in :data:`_PROVIDES` are imported when something asks for what they provide).
        self._builtins: dict[str, ModuleType | None] = {}
        #: The hooks of the imported templates while pluggy is left out (``None`` once it is not).
        self._hooks: dict[str, dict[str, FunctionType]] | None = {}
        #: The formats given to the native core (``None``) or that it refused (why), by name.
        self._declared: dict[str, str | None] = {}
        for module_name in builtins:
            self._builtins[module_name] = None
            if module_name not in _PROVIDES:
                self._import_builtin(module_name)
        self._builtin_names = set(self._builtins)
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

    def _import_builtin(self, module_name: str) -> ModuleType:
        module = self._builtins[module_name]
        if module is not None:
            return module
        module = self._builtins[module_name] = _import(module_name)
        if self._hooks is not None:
            hooks = _plain_hooks(module)
            if hooks is None:
                self._hooks = None  # pluggy orders this one's hooks; it gets every template
                self._cache.clear()
            else:
                self._hooks[module_name] = hooks
                for hook in hooks:  # its families' records are collected again, in registration order
                    self._cache.pop(hook.removeprefix("sidelight_"), None)
        return module

    def _import_family(self, family: str, names: Collection[str] | None = None) -> None:
        """Imports the built-in templates that have a hook of ``family`` (that provide one of
        ``names``, when given)."""
        for module_name, module in self._builtins.items():
            if module is None:
                if family not in _PROVIDES[module_name]:
                    continue
                provided = _PROVIDES[module_name][family]
                if names is None or provided is None or any(name in provided for name in names):
                    self._import_builtin(module_name)

    @property
    def manager(self) -> pluggy.PluginManager:
        """pluggy's plugin manager, with every plugin registered (made on first use)."""
        if self._manager is None:
            manager = _new_manager()
            for module_name in self._builtins:
                manager.register(self._import_builtin(module_name), name=module_name)
            manager.check_pending()
            self._manager = manager
            self._hooks = None
            self._cache.clear()  # what was collected before may lack templates not imported then
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
        self._declared.clear()

    def _implementations(self, family: str) -> list[tuple[str, Any]]:
        """The implementations of ``sidelight_<family>`` with their plugins' names, in the order pluggy
        calls them: the newest registered first (third-party plugins before the built-ins). Without
        pluggy, the built-in templates imported so far."""
        name = f"sidelight_{family}"
        hooks = self._hooks
        if hooks is not None:  # the built-in templates only, without pluggy
            return [
                (plugin, hooks[plugin][name])
                for plugin in reversed(self._builtins)
                if plugin in hooks and name in hooks[plugin]
            ]
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

    def _family(self, family: str) -> dict[str, Any]:
        self._import_family(family)
        return self._collect(family)

    def _named(self, family: str, name: str) -> Any:
        self._import_family(family, (name,))
        return self._collect(family).get(name)

    def formats(self) -> Mapping[str, FormatSpec]:
        """Every format; declared and Python-written ones are registered with the native core here
        (once per process). One the core refuses is skipped with a warning, like a broken plugin."""
        self._import_family("formats")
        return self._declare_formats()

    def format(self, name: str) -> FormatSpec | None:
        """The format ``name`` (``None``: none), as :meth:`formats` has it, importing no other agent's."""
        self._import_family("formats", (name,))
        return self._declare_formats().get(name)

    def _declare_formats(self) -> dict[str, FormatSpec]:
        """The formats of the plugins imported so far, each declared or Python-written one registered."""
        found: dict[str, FormatSpec] = self._collect("formats")
        for name, spec in list(found.items()):
            if spec.layout is None and spec.decode is None:
                continue  # read by a built-in decoder: nothing to register
            if name in self._declared:
                if self._declared[name] is not None:
                    del found[name]  # refused once (and said so)
                continue
            # (not FormatDeclarationError by name: importing it costs a prompt sidelight._declared)
            from sidelight.formats import register_format

            try:
                register_format(spec)
            except ValueError as error:  # a FormatDeclarationError
                del found[name]
                self._declared[name] = str(error)
                self.broken.append(BrokenPlugin(name, f"sidelight_formats: {error}"))
                logger.warning("format %s was skipped: %s", name, error)
            else:
                self._declared[name] = None
        return found

    def resolvers(
        self, settings: Settings | None = None, host: str | None = None
    ) -> Mapping[str, ResolverSpec]:
        """Every resolver; given the ``settings``, those that can list or name a session there.

        That leaves out the built-in agent templates none of whose folders exist (their resolvers
        would list nothing) unless one was imported already, or its resolver may name the session of
        an event of ``host`` (the hook's own host: a new session has no file yet), and the fleet's
        resolver when no fleet is set. What they give is the same; a prompt does not import the other
        agents' templates."""
        if settings is None:
            self._import_family("resolvers")
        else:
            for module_name, module in self._builtins.items():
                if module is not None or "resolvers" not in _PROVIDES[module_name]:
                    continue
                agent = agent_of(module_name)
                if agent is None:
                    here = _TEMPLATE_SESSIONS_HERE.get(module_name)
                    if here is None or here(settings):
                        self._import_builtin(module_name)
                elif (
                    agent.sessions_here is None
                    or may_name_current(agent, host)
                    or agent.sessions_here(settings)
                ):
                    self._import_builtin(module_name)
        return self._collect("resolvers")

    def resolver(self, name: str) -> ResolverSpec | None:
        """The resolver ``name`` (``None``: none), importing no other agent's template."""
        found: ResolverSpec | None = self._named("resolvers", name)
        return found

    def summarizers(self) -> Mapping[str, SummarizerSpec]:
        """In the order they are asked: third-party plugins first, the built-in default last."""
        return self._family("summarizers")

    def injectors(self) -> Mapping[str, InjectorSpec]:
        return self._family("injectors")

    def injector(self, name: str) -> InjectorSpec | None:
        """The injector ``name`` (a host; ``None``: none), importing no other host's template."""
        found: InjectorSpec | None = self._named("injectors", name)
        return found

    def agents(self) -> Mapping[str, AgentSpec]:
        """Every coding agent, built-in and the plugins', by name."""
        return self._family("agents")

    def agent(self, name: str) -> AgentSpec | None:
        """The agent ``name`` (``None``: none), importing no other built-in agent's module."""
        found: AgentSpec | None = self._named("agents", name)
        return found

    def agent_of_host(self, host: str) -> AgentSpec | None:
        """The agent whose hook events come with ``host`` (one of its :attr:`AgentSpec.hosts`; ``None``:
        no agent's). A built-in agent is named as its own host: that one is asked first, so that the
        other agents' modules are imported only for a host that is not an agent's name."""
        named = self.agent(host)
        if named is not None and host in named.hosts:
            return named
        return next((agent for agent in self.agents().values() if host in agent.hosts), None)

    def installers(self) -> Mapping[str, InstallerSpec]:
        """What ``sidelight install NAME`` sets up: the built-in hosts' and the plugins'."""
        return self._family("installers")

    def sinks(self) -> Mapping[str, SinkSpec]:
        return self._family("sinks")

    def token_counters(self) -> Mapping[str, TokenCounterSpec]:
        return self._family("token_counters")

    def embedders(self) -> Mapping[str, EmbedderSpec]:
        return self._family("embedders")

    def chunk_summarizers(self) -> Mapping[str, ChunkSummarizerSpec]:
        """In the order they are asked: third-party plugins first, the built-in ``extractive`` last."""
        return self._family("chunk_summarizers")

    def categories(self, decoders: Collection[str] | None = None) -> dict[str, dict[str, str]]:
        """Tool categories per native decoder, merged over the formats that use it (of ``decoders``
        only, when given: the built-in templates of other formats are not imported)."""
        self._import_family("formats", decoders)  # a built-in format's decoder is its name
        merged: dict[str, dict[str, str]] = {}
        for spec in self._declare_formats().values():
            if decoders is None or spec.decoder in decoders:
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
    for its log). A cache that cannot be read or written is only slower; one another user could have
    written (:func:`sidelight.warm.untrusted`: it names the modules a hook imports) is not read, and
    none is written in a state directory sidelight refuses."""
    from sidelight.config import default_state_dir
    from sidelight.statefile import write_atomic
    from sidelight.statelayout import ENTRY_POINTS_FILE
    from sidelight.warm import read_own_file, state_dir_problem

    installed = installed_key()
    folders = [folder for folder, _changed in installed]
    key: list[object] = [group, *([folder, changed] for folder, changed in installed)]
    newest = max((changed for _folder, changed in installed), default=0)
    which = zlib.crc32("\0".join(folders).encode("utf-8", "surrogateescape"))
    path = default_state_dir() / ENTRY_POINTS_FILE.format(path=f"{which:08x}")
    try:
        text, refused = read_own_file(os.fspath(path), "the entry-point cache")
        if refused is not None:
            logger.warning("%s", refused)
        if text is not None:
            kept = jsonio.loads(text)
            if kept["key"] == key:
                return [EntryPoint(*fields) for fields in kept["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = find_entry_points(group)
    if (
        time.time_ns() - newest > _RACY_SECONDS * 1e9
        and path.parent.is_dir()
        and state_dir_problem(os.fspath(path.parent)) is None
    ):
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


#: :func:`agent_name`'s answers, by format: the plugins' agents do not change in a process.
_agent_names: dict[str, str] = {}


def agent_name(format: str) -> str:
    """How a digest line names the agent of a session in ``format`` (:attr:`sidelight.records.Session.agent`):
    the :attr:`~sidelight.records.AgentSpec.short_name` of the process-wide plugins' agent named as the
    format (every built-in agent and most plugins' are), else the format's name."""
    name = _agent_names.get(format)
    if name is None:
        agent = get_plugins().agent(format)
        name = _agent_names[format] = (
            agent.short_name if agent is not None and format in agent.formats else format
        )
    return name


records.agent_name = agent_name
