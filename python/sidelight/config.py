"""Settings: where state lives, which sessions are siblings, and the hook's budgets.

Each setting comes, in order of precedence, from an environment variable, the config file
(``SIDELIGHT_CONFIG``, else ``<state dir>/config.toml``), or its default. Resolvers read the agents'
own locations from here too, so tests can point everything at a throwaway HOME.
"""

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast._record import NEW_DICT, record
from sidelight.errors import UsageError
from sidelight.warm import (
    CONFIG,
    DEFAULT_TIME_BUDGET,
    config_file,
    configured_state_dir,
    duration_seconds,
    read_own_file,
    state_dir_problem,
)
from sidelight.warm import default_state_dir as warm_state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

__all__ = [
    "EDIT_GUARD_MODES",
    "HANDOFF_LOCATIONS",
    "TURN_NEWS_MODES",
    "ConfigError",
    "Settings",
    "StateRefusedError",
    "check_number",
    "default_state_dir",
    "parse_count",
    "parse_duration",
    "parse_number",
]

#: Where a handoff file can go (``Settings.handoff_location``).
HANDOFF_LOCATIONS: Final = ("state", "project")
#: ``edit_guard``: a stale write refused once, let through with a note, or not looked at (docs/guard.md).
EDIT_GUARD_MODES: Final = ("refuse-once", "inform", "off")
#: ``turn_news``: a sibling's change to a file this session touched told after a tool call, or not.
TURN_NEWS_MODES: Final = ("on", "off")


class ConfigError(UsageError):
    """A setting has a value sidelight cannot use (the command line exits 2)."""


class StateRefusedError(ConfigError):
    """The state directory or the config file is another user's, or others may write it
    (:func:`sidelight.warm.untrusted`): sidelight uses nothing there (the command line exits 2, a hook
    prints nothing)."""


#: The longest duration any setting or option takes (a year): past it is a typo, and a timer that long
#: overflows what sleeping and socket calls accept.
MAX_SECONDS: Final = 366 * 86400.0
#: The largest count (lines, messages, tokens, bytes) any setting or option takes unless it says less.
MAX_COUNT: Final = 1 << 40


#: What a token budget is, in messages.
TOKENS: Final = "a number of tokens"


def check_number(
    number: float,
    name: str | None,
    given: object,
    *,
    minimum: float = 0,
    maximum: float = MAX_COUNT,
    above: bool = False,
) -> float:
    """``number`` (read from ``given``) when it is finite and in ``[minimum, maximum]`` (``above``:
    more than ``minimum``), else a :class:`ConfigError` that names the setting (``name``; ``None`` for
    a command-line option, whose name argparse puts first). The one range check of every numeric
    option, variable and setting: ``nan``, ``inf``, ``1e999`` and huge values are refused here."""
    prefix = f"{name} " if name else ""
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"{prefix}must be a finite number, not {given!r}")
    if above and number <= minimum:
        bound = "zero" if minimum == 0 else _plain(minimum)
        raise ConfigError(f"{prefix}must be more than {bound}, not {given!r}")
    if number < minimum:
        raise ConfigError(f"{prefix}must be at least {_plain(minimum)}, not {given!r}")
    if number > maximum:
        raise ConfigError(f"{prefix}must be at most {_plain(maximum)}, not {given!r}")
    return number


def _plain(number: float) -> str:
    """``31622400``, not ``3.16224e+07``; ``0.1`` as it is."""
    return str(int(number)) if number == int(number) else str(number)


def parse_number(
    value: object,
    name: str | None = None,
    *,
    minimum: float = 0,
    maximum: float = MAX_COUNT,
    above: bool = False,
) -> float:
    """A number (``0.25``, ``"1e3"``) that :func:`check_number` accepts."""
    if isinstance(value, bool):
        raise ConfigError(f"{name or 'the value'} must be a number, not {value!r}")
    try:
        number = float(value) if isinstance(value, int | float) else float(str(value).strip())
    except (ValueError, OverflowError):
        raise ConfigError(f"{name + ' ' if name else ''}must be a number, not {value!r}") from None
    return check_number(number, name, value, minimum=minimum, maximum=maximum, above=above)


def parse_count(
    value: object,
    name: str | None = None,
    *,
    minimum: int = 0,
    maximum: int = MAX_COUNT,
    what: str = "a whole number",
) -> int:
    """A whole number (``50``, ``"1_000"``) that :func:`check_number` accepts; ``what`` it counts
    for the message (``"a number of tokens"``)."""
    prefix = f"{name} " if name else ""
    if isinstance(value, bool):
        raise ConfigError(f"{prefix}must be {what}, not {value!r}")
    try:
        number = value if isinstance(value, int) else int(str(value).strip())
    except ValueError:
        raise ConfigError(f"{prefix}must be {what}, not {value!r}") from None
    # Compared as an integer: a float cannot hold 99999999999999999999999 exactly.
    if number > maximum:
        raise ConfigError(f"{name + ' ' if name else ''}must be at most {maximum}, not {value!r}")
    return int(check_number(number, name, value, minimum=minimum, maximum=maximum))


def parse_duration(
    text: str | float | int,
    name: str | None = None,
    *,
    minimum: float = 0,
    maximum: float = MAX_SECONDS,
    above: bool = False,
) -> float:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"8h"``, ``"1.5s"`` or ``"250ms"``, finite and in
    range (:func:`check_number`; at most :data:`MAX_SECONDS` unless told)."""
    if isinstance(text, bool):
        raise ConfigError(f"not a duration: {text!r} (use e.g. 90s, 30m, 8h)")
    if isinstance(text, int | float):
        seconds: float | None = float(text)
    else:
        try:
            seconds = duration_seconds(text)
        except OverflowError:  # "1e999ms": a float past its range, times the unit
            seconds = float("inf")
    if seconds is None:
        raise ConfigError(f"{name + ': ' if name else ''}not a duration: {text!r} (use e.g. 90s, 30m, 8h)")
    if seconds < 0:
        raise ConfigError(f"{name + ': ' if name else ''}a duration cannot be negative: {text!r}")
    return check_number(seconds, name, text, minimum=minimum, maximum=maximum, above=above)


def _default_state_dir(env: Mapping[str, str], home: Path) -> Path:
    # The rule lives with the warm path's client, which must find the state directory without this
    # module (see sidelight.warm).
    return Path(warm_state_dir(env, os.fspath(home)))


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The state directory the environment names (``SIDELIGHT_STATE_DIR``, else
    ``$XDG_STATE_HOME/sidelight``, else ``~/.local/state/sidelight``), without reading the config file
    (whose ``state_dir`` :meth:`Settings.load` also honours)."""
    env = os.environ if env is None else env
    return _default_state_dir(env, Path(env.get("HOME") or Path.home()))


_set = object.__setattr__


@record(frozen=True)
class Settings:
    """Everything a hook, a resolver or the watcher needs to know about this machine's setup.

    A frozen dataclass as far as its users can tell (:func:`dataclasses.replace` makes a changed
    copy), written out (:mod:`sidelight._fast._record`): every prompt hook makes this class."""

    __slots__ = (
        "claude_dirs",
        "codex_dir",
        "copilot_dir",
        "edit_guard",
        "extra",
        "first_look_bytes",
        "fleet_scope",
        "gemini_dir",
        "handoff_location",
        "home",
        "host_id",
        "idle_timeout",
        "pi_dir",
        "prompt_budget",
        "qwen_dir",
        "redis_url",
        "scope",
        "start_budget",
        "state_dir",
        "time_budget",
        "turn_news",
        "volute_dirs",
        "volute_minds_dir",
    )

    home: Path
    state_dir: Path
    #: Who the siblings are: ``"repository"`` (sessions whose working directories lie in one git
    #: repository: its main checkout, any linked worktree, any subfolder; outside git, the same
    #: directory), ``"directory"`` (the same working directory), ``"all"``, or a set of session names.
    #: ``"project"``, the default's former name, is read as ``"repository"``.
    scope: str | frozenset[str]
    #: How many bytes of a sibling's history are read the first time it is seen. A Claude Code session
    #: writes ~140 KB of attachments and request shapes with its first prompt: 64 KiB held less than
    #: one turn of a real one (its prompt and its edit left out), 512 KiB holds a few.
    first_look_bytes: int
    #: Seconds a prompt hook may take before it gives up on slow files.
    time_budget: float
    #: Seconds without activity after which a session is idle (and gets a resume context when it
    #: comes back).
    idle_timeout: float
    #: Claude Code configuration folders (``CLAUDE_CONFIG_DIR``, comma-separated, else ``~/.claude``).
    claude_dirs: tuple[Path, ...]
    #: Pi's agent folder (``PI_CODING_AGENT_DIR``, else ``~/.pi/agent``).
    pi_dir: Path | None
    #: Codex's home (``CODEX_HOME``, else ``~/.codex``).
    codex_dir: Path | None
    #: volute mind folders to list sessions of (each holds ``.volute/``): the config file's
    #: ``volute_dirs`` or ``SIDELIGHT_VOLUTE_DIRS``, and ``VOLUTE_MIND_DIR`` (volute sets it for a
    #: mind's processes). Hooks also find the mind of their own ``cwd`` when it is one of these or
    #: directly in ``volute_minds_dir``; a ``.volute/`` anywhere else (a repository can ship one) is
    #: no mind (:func:`sidelight.engine.paths.find_volute_mind`).
    volute_dirs: tuple[Path, ...]
    #: The raw config file contents, for plugins' own settings (``[plugins.NAME]`` tables).
    extra: Mapping[str, Any]
    #: Fleets (``docs/fleet.md``): the Redis server to publish to and read siblings of other machines
    #: from (``redis://`` or ``rediss://`` for TLS, password in the URL); ``None``: this machine only.
    redis_url: str | None
    #: This machine's name in the fleet (``None``: the short host name).
    host_id: str | None
    #: The fleet's scope: machines that share it see each other, through the stream ``sidelight:<scope>``.
    fleet_scope: str
    #: Where a plain agent session's ``_handoff.md`` is written: ``"state"`` (in the state directory,
    #: ``handoffs/<workspace hash>/``, ``0600``) or ``"project"`` (in the workspace itself, listed in the
    #: repository's ``.git/info/exclude``). A volute mind's is always in its workspace.
    handoff_location: str
    #: At most about this many tokens of sidelight's blocks go with one prompt (the digest is always
    #: kept; ``SIDELIGHT_PROMPT_BUDGET``, ``prompt_budget``).
    prompt_budget: int
    #: At most about this many tokens go at a session's start (``SIDELIGHT_START_BUDGET``,
    #: ``start_budget``).
    start_budget: int
    #: The Gemini CLI's folder (``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``).
    gemini_dir: Path | None
    #: Qwen Code's folder (``$QWEN_HOME``, ``~`` expanded, a relative one from the current directory,
    #: else ``~/.qwen``).
    qwen_dir: Path | None
    #: GitHub Copilot CLI's folder (``$COPILOT_HOME``, else ``~/.copilot``).
    copilot_dir: Path | None
    #: Where volute creates its minds (``VOLUTE_MINDS_DIR``, else ``$VOLUTE_HOME/minds``, else
    #: ``~/.volute/minds``; ``None``: nowhere): a mind directly in it is volute's own.
    volute_minds_dir: Path | None
    #: What a write tool gets when another session changed its file since this one last read or wrote
    #: it (docs/guard.md): ``"refuse-once"`` (stopped once; the retry goes through), ``"inform"`` (let
    #: through with a note), ``"off"`` (``SIDELIGHT_EDIT_GUARD``, ``edit_guard``).
    edit_guard: str
    #: Whether a sibling's change to a file this session touched is told after a tool call, within the
    #: turn (docs/digest.md): ``"on"`` or ``"off"`` (``SIDELIGHT_TURN_NEWS``, ``turn_news``; off: the
    #: after-tool hook returns before anything is read).
    turn_news: str

    def __init__(
        self,
        home: Path,
        state_dir: Path,
        scope: str | frozenset[str] = "repository",
        first_look_bytes: int = 512 * 1024,
        time_budget: float = DEFAULT_TIME_BUDGET,
        idle_timeout: float = 1800.0,
        claude_dirs: tuple[Path, ...] = (),
        pi_dir: Path | None = None,
        codex_dir: Path | None = None,
        volute_dirs: tuple[Path, ...] = (),
        extra: Mapping[str, Any] = NEW_DICT,
        redis_url: str | None = None,
        host_id: str | None = None,
        fleet_scope: str = "default",
        handoff_location: str = "state",
        prompt_budget: int = 200,
        start_budget: int = 800,
        gemini_dir: Path | None = None,
        qwen_dir: Path | None = None,
        copilot_dir: Path | None = None,
        volute_minds_dir: Path | None = None,
        edit_guard: str = "refuse-once",
        turn_news: str = "on",
    ) -> None:
        _set(self, "home", home)
        _set(self, "state_dir", state_dir)
        _set(self, "scope", scope)
        _set(self, "first_look_bytes", first_look_bytes)
        _set(self, "time_budget", time_budget)
        _set(self, "idle_timeout", idle_timeout)
        _set(self, "claude_dirs", claude_dirs)
        _set(self, "pi_dir", pi_dir)
        _set(self, "codex_dir", codex_dir)
        _set(self, "volute_dirs", volute_dirs)
        _set(self, "extra", {} if extra is NEW_DICT else extra)
        _set(self, "redis_url", redis_url)
        _set(self, "host_id", host_id)
        _set(self, "fleet_scope", fleet_scope)
        _set(self, "handoff_location", handoff_location)
        _set(self, "prompt_budget", prompt_budget)
        _set(self, "gemini_dir", gemini_dir)
        _set(self, "qwen_dir", qwen_dir)
        _set(self, "copilot_dir", copilot_dir)
        _set(self, "start_budget", start_budget)
        _set(self, "volute_minds_dir", volute_minds_dir)
        _set(self, "edit_guard", edit_guard)
        _set(self, "turn_news", turn_news)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, home: Path | None = None) -> Settings:
        """Settings from the environment and the config file. Raises :class:`StateRefusedError` when
        the state directory or the config file is another user's or others may write it (nothing
        there is read or written then), :class:`ConfigError` for a setting it cannot use."""
        env = os.environ if env is None else env
        home = home or Path(env.get("HOME") or Path.home())
        state_dir = _default_state_dir(env, home)
        _refuse(state_dir_problem(os.fspath(state_dir)))
        config_path = Path(config_file(env, os.fspath(state_dir)))
        data: dict[str, Any] = {}
        try:
            text, refused = read_own_file(os.fspath(config_path), CONFIG)
        except OSError as error:
            raise ConfigError(f"{config_path}: cannot read the config file ({error})") from None
        _refuse(refused)
        if text is not None:
            import tomllib  # only with a config file: it costs a prompt hook some 7 ms to import

            try:
                data = tomllib.loads(text.decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
                raise ConfigError(f"{config_path}: cannot read the config file ({error})") from None

        def setting(name: str, env_name: str) -> Any:
            return env.get(env_name, data.get(name))

        configured = configured_state_dir(env, data)
        if configured is not None:
            state_dir = Path(configured)
            _refuse(state_dir_problem(configured))
        claude = env.get("CLAUDE_CONFIG_DIR")
        claude_dirs = (
            tuple(Path(p).expanduser() for p in claude.split(",") if p.strip())
            if claude
            else (home / ".claude", home / ".config" / "claude")
        )
        volute = setting("volute_dirs", "SIDELIGHT_VOLUTE_DIRS") or ()
        if isinstance(volute, str):
            volute = [p for p in volute.split(os.pathsep) if p.strip()]
        volute_dirs = tuple(Path(str(p)).expanduser() for p in volute)
        if env.get("VOLUTE_MIND_DIR"):  # volute runs this process for that mind: it vouches for it
            volute_dirs += (Path(env["VOLUTE_MIND_DIR"]),)
        given: dict[str, Any] = {}  # the settings that are not left at their defaults
        scope = setting("scope", "SIDELIGHT_SCOPE")
        if scope is not None:
            given["scope"] = _parse_scope(scope)
        first_look = setting("first_look_bytes", "SIDELIGHT_FIRST_LOOK_BYTES")
        if first_look is not None:
            given["first_look_bytes"] = parse_count(first_look, "first_look_bytes")
        budget = setting("time_budget", "SIDELIGHT_TIME_BUDGET")
        if budget is not None:
            given["time_budget"] = parse_duration(budget, "time_budget")
        idle = setting("idle_timeout", "SIDELIGHT_IDLE_TIMEOUT")
        if idle is not None:
            given["idle_timeout"] = parse_duration(idle, "idle_timeout")
        redis_url = str(setting("redis_url", "SIDELIGHT_REDIS_URL") or "").strip()
        if redis_url:
            given["redis_url"] = redis_url
        host_id = str(setting("host_id", "SIDELIGHT_HOST_ID") or "").strip()
        if host_id:
            given["host_id"] = host_id
        fleet_scope = str(setting("fleet_scope", "SIDELIGHT_FLEET_SCOPE") or "").strip()
        if fleet_scope:
            given["fleet_scope"] = fleet_scope
        location = setting("handoff_location", "SIDELIGHT_HANDOFF_LOCATION")
        if location is not None:
            given["handoff_location"] = _choice(location, "handoff_location", HANDOFF_LOCATIONS)
        prompt_budget = setting("prompt_budget", "SIDELIGHT_PROMPT_BUDGET")
        if prompt_budget is not None:
            given["prompt_budget"] = parse_count(prompt_budget, "prompt_budget", what=TOKENS)
        start_budget = setting("start_budget", "SIDELIGHT_START_BUDGET")
        if start_budget is not None:
            given["start_budget"] = parse_count(start_budget, "start_budget", what=TOKENS)
        guard = setting("edit_guard", "SIDELIGHT_EDIT_GUARD")
        if guard is not None:
            given["edit_guard"] = _choice(guard, "edit_guard", EDIT_GUARD_MODES)
        news = setting("turn_news", "SIDELIGHT_TURN_NEWS")
        if news is not None:
            given["turn_news"] = _choice(news, "turn_news", TURN_NEWS_MODES)
        return cls(
            home=home,
            state_dir=state_dir,
            claude_dirs=claude_dirs,
            pi_dir=Path(env["PI_CODING_AGENT_DIR"])
            if env.get("PI_CODING_AGENT_DIR")
            else home / ".pi" / "agent",
            codex_dir=Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex",
            # The Gemini CLI puts its `.gemini` under GEMINI_CLI_HOME when that is set.
            gemini_dir=Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini",
            # Qwen Code and Copilot CLI take QWEN_HOME and COPILOT_HOME as their folder itself.
            qwen_dir=_agent_dir(env.get("QWEN_HOME"), home, ".qwen"),
            copilot_dir=_agent_dir(env.get("COPILOT_HOME"), home, ".copilot"),
            volute_dirs=volute_dirs,
            volute_minds_dir=Path(env["VOLUTE_MINDS_DIR"])
            if env.get("VOLUTE_MINDS_DIR")
            else Path(env.get("VOLUTE_HOME") or home / ".volute") / "minds",
            extra=data,
            **given,
        )


def _choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """``value`` of setting ``name`` as one of ``choices`` (any case, spaces around it); else a
    :class:`ConfigError` naming them."""
    text = str(value).strip().lower()
    if text not in choices:
        listed = " or ".join(f"'{c}'" for c in choices)
        raise ConfigError(f"{name} must be {listed}, not {value!r}")
    return text


def _refuse(problem: str | None) -> None:
    if problem is not None:
        raise StateRefusedError(problem)


def _agent_dir(value: str | None, home: Path, default: str) -> Path:
    """An agent's folder from its variable as the agent reads it: ``~`` (alone or leading) is the home,
    a relative path is from the current directory; unset or empty: ``home / default``."""
    if not value:
        return home / default
    if value == "~" or value.startswith("~/"):
        return home.joinpath(value[2:])
    return Path(os.path.abspath(value))  # noqa: PTH100 (normalized as Node's path.resolve does)


#: The scopes that are no list of names (``project`` is the former name of ``repository``).
SCOPES = ("repository", "directory", "all")


def _parse_scope(value: Any) -> str | frozenset[str]:
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    text = str(value).strip()
    if text in SCOPES:
        return text
    if text == "project":
        return "repository"
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise ConfigError(
            "scope must be 'repository', 'directory', 'all' or a comma-separated list of names, "
            f"not {value!r}"
        )
    return names
