"""The built-in agents, one folder each: everything sidelight knows about one agent lives in its folder.

Each agent registers through the same hooks a third-party plugin uses; only the plugin manager loads
an agent's module, by name.

This module is the static index of the built-in agents (:data:`BUILTIN_AGENTS`): what must be known of
each before its module is imported, so that a prompt imports only the agents it can need, and so that
the plugin manager, the hook, the warm path and the command line name no agent. It is read on every
prompt, before anything else of sidelight's (:mod:`sidelight.warm` takes the agents' variables from
it), so it imports nothing but ``os``: its records are plain classes, its folder checks a few ``stat``
calls. ``tests/test_plugins.py`` checks each record against what its agent's module really provides
and answers.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from sidelight.config import Settings

__all__ = [
    "AGENT_FOLDER_VARIABLES",
    "BUILTIN_AGENTS",
    "EXPORTS_DIR",
    "FALLBACK_HOST",
    "FOLDER_VARIABLES",
    "HOOK_HOSTS",
    "HOOK_VARIABLES",
    "HOST_VARIABLES",
    "BuiltinAgent",
    "agent_of",
    "cline_data_dir",
    "may_name_current",
    "opencode_database",
    "other_agents_hosts",
    "start_may_resume",
]


class BuiltinAgent:
    """One built-in agent's module, as it is known before it is imported.

    ``module``: the module's name. ``provides``: its hooks' families, each with the names of its records
    (the module is imported when one of them is asked for by name, or a whole family it has a hook in).
    ``sessions_here(settings)``: whether its resolver can find any session there, tested with a few
    ``stat`` calls (where it says no, the resolver's ``list_sessions`` and ``roots`` give nothing);
    ``None``: always ask the resolver. ``hosts``: the hosts whose events its resolver's ``current`` may
    name a session for although none of its folders exists yet (a new session's first prompt).
    ``fallback``: it also names one for the events of every host no other built-in agent has in its
    ``hosts`` (the agent whose hook protocol the others copy: a plugin's host may be it under another
    name). ``variables``: the environment variables that move its folders (a watcher must see the ones
    its hooks see). ``hook_variables``: variables its host sets for one hook that change the answer (a
    watcher without them would answer otherwise). ``start_may_resume``: its host's start event does not
    say whether the session is new or comes back, so every start may be a return.
    """

    __slots__ = (
        "fallback",
        "hook_variables",
        "hosts",
        "module",
        "provides",
        "sessions_here",
        "start_may_resume",
        "variables",
    )

    def __init__(
        self,
        module: str,
        provides: Mapping[str, tuple[str, ...]],
        sessions_here: Callable[[Settings], bool] | None = None,
        hosts: tuple[str, ...] = (),
        *,
        fallback: bool = False,
        variables: tuple[str, ...] = (),
        hook_variables: tuple[str, ...] = (),
        start_may_resume: bool = False,
    ) -> None:
        self.module = module
        self.provides = provides
        self.sessions_here = sessions_here
        self.hosts = hosts
        self.fallback = fallback
        self.variables = variables
        self.hook_variables = hook_variables
        self.start_may_resume = start_may_resume

    def __repr__(self) -> str:
        return f"BuiltinAgent({self.module!r})"


def _isdir(folder: Path, name: str) -> bool:
    return os.path.isdir(os.path.join(folder, name))  # noqa: PTH112, PTH118


def _claude_code_here(settings: Settings) -> bool:
    return any(_isdir(folder, "projects") for folder in settings.claude_dirs)


def _pi_here(settings: Settings) -> bool:
    return settings.pi_dir is not None and _isdir(settings.pi_dir, "sessions")


def _codex_here(settings: Settings) -> bool:
    return settings.codex_dir is not None and _isdir(settings.codex_dir, "sessions")


def _qwen_here(settings: Settings) -> bool:
    return _isdir(settings.qwen_dir or settings.home / ".qwen", "projects")


def _copilot_here(settings: Settings) -> bool:
    return _isdir(settings.copilot_dir or settings.home / ".copilot", "session-state")


def _gemini_here(settings: Settings) -> bool:
    return settings.gemini_dir is not None and _isdir(settings.gemini_dir, "tmp")


def _droid_here(settings: Settings) -> bool:
    return _isdir(settings.home / ".factory", "sessions")


def _kimi_here(settings: Settings) -> bool:
    folder = os.environ.get("KIMI_SHARE_DIR") or os.path.join(settings.home, ".kimi")  # noqa: PTH118
    return os.path.isdir(os.path.join(folder, "sessions"))  # noqa: PTH112, PTH118


#: The folder of the state directory where sidelight exports the sessions of the agents that keep them in
#: a database, one folder per agent (:func:`sidelight.statelayout.export_dir`, which has the name from
#: here: this module is read before anything else of sidelight's).
EXPORTS_DIR = "exports"


def opencode_database(settings: Settings) -> str:
    """opencode's database: ``$XDG_DATA_HOME/opencode/opencode.db``, else under ``~/.local/share``."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(settings.home, ".local", "share")  # noqa: PTH118
    return os.path.join(data, "opencode", "opencode.db")  # noqa: PTH118


def _opencode_here(settings: Settings) -> bool:
    # Its sessions are in opencode's database (exported on listing); its root is the export folder (where
    # older versions kept it, until its first listing moves it).
    state = os.fspath(settings.state_dir)
    return (
        os.path.isfile(opencode_database(settings))  # noqa: PTH113
        or os.path.isdir(os.path.join(state, EXPORTS_DIR, "opencode"))  # noqa: PTH112, PTH118
        or os.path.isdir(os.path.join(state, "opencode"))  # noqa: PTH112, PTH118
    )


def cline_data_dir(settings: Settings) -> str:
    """Cline's data folder: ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data``."""
    data = os.environ.get("CLINE_DATA_DIR", "").strip()
    if data:
        return data
    top = os.environ.get("CLINE_DIR", "").strip() or os.path.join(settings.home, ".cline")  # noqa: PTH118
    return os.path.join(top, "data")  # noqa: PTH118


def _cline_here(settings: Settings) -> bool:
    # Its sessions folder, or sidelight's export of it (the sessions already exported are listed).
    return os.path.isdir(os.path.join(cline_data_dir(settings), "sessions")) or os.path.isdir(  # noqa: PTH112, PTH118
        os.path.join(os.fspath(settings.state_dir), EXPORTS_DIR, "cline")  # noqa: PTH118
    )


#: The built-in agents, in the order they are registered (before the other built-in templates).
BUILTIN_AGENTS: tuple[BuiltinAgent, ...] = (
    BuiltinAgent(
        "sidelight.agents.claude_code",
        {
            "formats": ("claude-code",),
            "resolvers": ("claude-code",),
            "injectors": ("claude-code", "agent-sdk"),
            "installers": ("claude-code",),
            "agents": ("claude-code",),
        },
        _claude_code_here,
        ("claude-code", "agent-sdk"),
        fallback=True,
        variables=("CLAUDE_CONFIG_DIR",),
    ),
    BuiltinAgent(
        "sidelight.agents.pi",
        {
            "formats": ("pi",),
            "resolvers": ("pi",),
            "injectors": ("pi",),
            "installers": ("pi",),
            "agents": ("pi",),
        },
        _pi_here,
        ("pi",),
        variables=("PI_CODING_AGENT_DIR",),
        start_may_resume=True,
    ),
    BuiltinAgent(
        "sidelight.agents.codex",
        {
            "formats": ("codex",),
            "resolvers": ("codex",),
            "injectors": ("codex",),
            "installers": ("codex",),
            "agents": ("codex",),
        },
        _codex_here,
        ("codex",),
        variables=("CODEX_HOME",),
    ),
    BuiltinAgent(
        "sidelight.agents.qwen",
        {
            "formats": ("qwen",),
            "resolvers": ("qwen",),
            "injectors": ("qwen",),
            "installers": ("qwen",),
            "agents": ("qwen",),
        },
        _qwen_here,
        ("qwen",),
        variables=("QWEN_HOME",),
    ),
    BuiltinAgent(
        "sidelight.agents.copilot",
        {
            "formats": ("copilot",),
            "resolvers": ("copilot",),
            "injectors": ("copilot",),
            "installers": ("copilot",),
            "agents": ("copilot",),
        },
        _copilot_here,
        ("copilot",),
        variables=("COPILOT_HOME",),
    ),
    BuiltinAgent(
        "sidelight.agents.gemini",
        {
            "formats": ("gemini",),
            "resolvers": ("gemini",),
            "injectors": ("gemini",),
            "installers": ("gemini",),
            "agents": ("gemini",),
        },
        _gemini_here,
        ("gemini",),
        variables=("GEMINI_CLI_HOME",),
    ),
    BuiltinAgent(
        "sidelight.agents.opencode",
        {
            "formats": ("opencode",),
            "resolvers": ("opencode",),
            "injectors": ("opencode",),
            "installers": ("opencode",),
            "agents": ("opencode",),
        },
        _opencode_here,
        ("opencode",),
        variables=("XDG_DATA_HOME",),  # its database, and sidelight's export of it
    ),
    BuiltinAgent(
        "sidelight.agents.droid",
        {
            "formats": ("droid",),
            "resolvers": ("droid",),
            "injectors": ("droid",),
            "installers": ("droid",),
            "agents": ("droid",),
        },
        _droid_here,
        ("droid",),
    ),
    BuiltinAgent(
        "sidelight.agents.kimi",
        {
            "formats": ("kimi",),
            "resolvers": ("kimi",),
            "injectors": ("kimi",),
            "installers": ("kimi",),
            "agents": ("kimi",),
        },
        _kimi_here,
        ("kimi",),
        variables=("KIMI_SHARE_DIR",),
    ),
    BuiltinAgent(
        "sidelight.agents.cline",
        {
            "formats": ("cline",),
            "resolvers": ("cline",),
            "injectors": ("cline",),
            "installers": ("cline",),
            "agents": ("cline",),
        },
        _cline_here,
        ("cline",),
        variables=("CLINE_DIR", "CLINE_DATA_DIR"),  # its sessions, and so sidelight's export of them
    ),
    BuiltinAgent(
        # Its minds are found around the working directory: its resolver is always asked.
        "sidelight.agents.volute",
        {"resolvers": ("volute",), "agents": ("volute",)},
        variables=("VOLUTE_HOME", "VOLUTE_MINDS_DIR"),  # its minds folder (a mind in it is trusted as one)
        # the mind a hook runs for, which vouches for it; a watcher without it would not list the mind
        hook_variables=("VOLUTE_MIND_DIR",),
    ),
)

_BY_MODULE: dict[str, BuiltinAgent] = {agent.module: agent for agent in BUILTIN_AGENTS}

#: The hosts whose hook protocol the built-in agents speak (``sidelight hook HOST``); plugins may add more.
HOOK_HOSTS: tuple[str, ...] = tuple(h for a in BUILTIN_AGENTS for h in a.provides.get("injectors", ()))
#: The variables that move the built-in agents' folders.
FOLDER_VARIABLES: tuple[str, ...] = tuple(v for a in BUILTIN_AGENTS for v in a.variables)
#: The variables a host sets for one hook that change its answer.
HOOK_VARIABLES: tuple[str, ...] = tuple(v for a in BUILTIN_AGENTS for v in a.hook_variables)
#: Variables outside ``SIDELIGHT_*`` that say where the state is and where the agents keep their
#: sessions: what the watcher's service is given (``install.service.SERVICE_ENVIRONMENT``).
AGENT_FOLDER_VARIABLES: tuple[str, ...] = ("XDG_STATE_HOME", *FOLDER_VARIABLES)
#: Variables outside ``SIDELIGHT_*`` that change what a hook answers, which a watcher compares with a
#: hook's (:func:`sidelight.warm.environment`): the folders', and those a host sets for one hook (a
#: watcher without them would answer otherwise).
HOST_VARIABLES: frozenset[str] = frozenset({"HOME", *HOOK_VARIABLES, *AGENT_FOLDER_VARIABLES})
#: The host an event is planned for when a session's own format has no injector: the fallback agent's.
FALLBACK_HOST: str = next(a.hosts[0] for a in BUILTIN_AGENTS if a.fallback)
_RESUMING_HOSTS = frozenset(h for a in BUILTIN_AGENTS if a.start_may_resume for h in a.hosts)


def agent_of(module: str) -> BuiltinAgent | None:
    """The built-in agent whose module is ``module`` (``None``: not an agent's)."""
    return _BY_MODULE.get(module)


def other_agents_hosts(module: str) -> frozenset[str]:
    """The hosts the built-in agents other than ``module``'s name a new session for."""
    return frozenset(h for a in BUILTIN_AGENTS if a.module != module for h in a.hosts)


def may_name_current(agent: BuiltinAgent, host: str | None) -> bool:
    """Whether ``agent``'s resolver may name the session of an event of ``host`` although none of its
    folders exists yet."""
    if host is None:
        return False
    return host in agent.hosts or (agent.fallback and host not in other_agents_hosts(agent.module))


def start_may_resume(host: str) -> bool:
    """Whether any start of ``host`` may be a session's return (its start does not say which)."""
    return host in _RESUMING_HOSTS
