"""What every command shares: its exit codes, its logger, and the one line it says an error in.

A command returns :data:`EXIT_OK` or :data:`EXIT_FAILED`; an error a person can act on (a session that
does not exist, a file that cannot be read, a bad setting: :data:`EXPECTED_ERRORS`) is said by
:func:`fail` as one line on stderr. :func:`run` calls a command for ``main``: what escapes a command is
an internal error, said as one line too (``-vv`` logs the traceback), never a traceback on stderr.

A result printed with ``--json`` is :func:`json_line`: one object per line, nothing else on stdout. On a
terminal, :func:`paint` colours headers, session states and the error and warning lines (``--color``,
``NO_COLOR``, ``FORCE_COLOR``: :func:`configure_colour`); ``rich`` is imported only when it colours.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Final, TextIO

from sidelight.errors import SidelightError, UsageError, describe

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator, Mapping

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXPECTED_ERRORS",
    "RegisteredNames",
    "configure_colour",
    "env_flag",
    "fail",
    "faithful",
    "format_option",
    "json_line",
    "log_formatter",
    "logger",
    "no_redact_option",
    "number_option",
    "paint",
    "run",
]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

#: What a command reports as one line and exit 1; anything else is an internal error.
EXPECTED_ERRORS: Final = (SidelightError, LookupError, ImportError, OSError, ValueError)

#: The most entries, messages or lines an option may ask for (a person reads far fewer; the core's
#: limits are machine words, which 99999999999999999999999 overflowed).
MAX_ENTRIES: Final = 1_000_000
#: The most tokens a budget option may give (``number_option(maximum=MAX_TOKENS, what=TOKENS)``).
MAX_TOKENS: Final = 100_000_000

#: Every command's output beside its results goes through the package logger (``-v``/``-q``).
logger = logging.getLogger("sidelight")


def fail(error: BaseException, path: str | None = None) -> int:
    """Say ``error`` (about ``path``, when given) as one line on stderr; the exit code of a failure:
    :data:`EXIT_USAGE` for what a person gave and can fix (:class:`~sidelight.errors.UsageError`: an
    option, a setting, a path that is no regular file), else :data:`EXIT_FAILED`."""
    logger.error("%s", describe(error, path))
    return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILED


def number_option(
    *,
    minimum: float = 1,
    maximum: float = MAX_ENTRIES,
    integer: bool = True,
    duration: bool = False,
    above: bool = False,
    what: str = "a whole number",
) -> Callable[[str], Any]:
    """An argparse ``type=`` for a numeric option: a whole number (``integer``), a number, or a
    duration (``90s``, ``250ms``), checked by :func:`sidelight.config.check_number` (finite, in range);
    argparse says what is wrong in one line and exits 2."""

    def parse(text: str) -> Any:
        import argparse

        from sidelight.config import ConfigError, parse_count, parse_duration, parse_number

        try:
            if duration:
                return parse_duration(text, minimum=minimum, maximum=maximum, above=above)
            if integer:
                return parse_count(text, minimum=int(minimum), maximum=int(maximum), what=what)
            return parse_number(text, minimum=minimum, maximum=maximum, above=above)
        except ConfigError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = "duration" if duration else "number"  # argparse's "invalid <name> value"
    return parse


def run(
    command: Callable[[argparse.ArgumentParser, argparse.Namespace], int],
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
) -> int:
    """Run one command and turn what escapes it into an exit code and at most one line."""
    try:
        return command(parser, args)
    except KeyboardInterrupt:
        logger.error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`sidelight sessions | head -1`): it has what it wanted, so this is no
        # failure. Stop quietly with exit 0, as ripgrep does (not 1, which says a file failed); stdout
        # goes to /dev/null so that the flush at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:  # the promise: one line, never a traceback (-vv logs it)
        logger.debug("internal error", exc_info=True)
        logger.error("internal error: %s (run with -vv for details)", describe(error))
        return EXIT_FAILED


def format_option(command: argparse.ArgumentParser, what: str = "the transcript's format") -> None:
    """``-f/--format`` on ``command``: ``auto``, a format the native core reads
    (:class:`sidelight.formats.Format`) or an installed plugin's, ``SIDELIGHT_FORMAT`` by default
    (checked like the option: a wrong one is a usage error, exit 2, that lists every registered
    format). The plugins are loaded only for a name the core does not read itself: building the parser
    (``--help``, completion) does not load them."""
    import argparse

    def parse(text: str) -> str:
        value = text.strip().lower()
        from sidelight.formats import Format

        if value == "auto" or value in Format.__members__.values():
            return value
        from sidelight.engine.scanning import format_names

        registered = format_names()
        if value not in registered:
            raise argparse.ArgumentTypeError(
                f"unknown format {text!r}; use one of auto, {', '.join(registered)}"
            )
        return value

    command.add_argument(
        "-f",
        "--format",
        type=parse,
        default=os.environ.get("SIDELIGHT_FORMAT", "auto"),  # a string default goes through type=
        metavar="FORMAT",
        help=f"{what}: auto (detect from the first lines) or the name of a registered format (sidelight "
        "plugins lists them) [env: SIDELIGHT_FORMAT; default: auto]",
    )


class RegisteredNames:
    """``choices=`` for an argument whose names come from the plugins (``sidelight install NAME``):
    ``load()`` gives them, called when the argument is checked or listed (an error, completion), not
    when the parser is built (``--help`` does not load the plugins)."""

    def __init__(self, load: Callable[[], list[str]]) -> None:
        self._load = load
        self._names: list[str] | None = None

    def names(self) -> list[str]:
        if self._names is None:
            self._names = self._load()
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def json_line(record: Any, out: TextIO | None = None) -> None:
    """Write ``record`` to ``out`` (stdout) as one JSON object on one line: what every ``--json`` prints,
    one line per result, so that ``jq`` or a ``for line in`` loop reads each as it comes."""
    import json

    (sys.stdout if out is None else out).write(json.dumps(record, ensure_ascii=False) + "\n")


def faithful(
    record: dict[str, Any], texts: Mapping[str, int | None], *, redact: bool = True
) -> dict[str, Any]:
    """``record`` (a ``--json`` result) with its transcript texts as the transcript has them: each field
    of ``texts`` cut to its limit when it is longer (``None``: never cut) and named in the record's
    ``cut`` list when it was, its secrets redacted unless ``redact`` is false (``--no-redact``).
    Nothing else is changed: no whitespace squeezed, no line break or indentation lost, no path
    rewritten; JSON escaping is all control characters need. (A person's terminal gets the sanitized
    form, :func:`sidelight.redact.sanitize`; a program gets the data.)

    A command that wants to know whether a text was cut asks the core for one character more than it
    shows: a text longer than its limit was cut."""
    from sidelight.redact import redact as redacted

    cut = []
    for name, limit in texts.items():
        value = record.get(name)
        if not isinstance(value, str):
            continue
        if limit is not None and len(value) > limit:
            value = value[:limit]
            cut.append(name)
        record[name] = redacted(value) if redact else value
    record["cut"] = cut
    return record


def no_redact_option(command: argparse.ArgumentParser) -> None:
    """``--no-redact`` on a command whose ``--json`` carries transcript text."""
    command.add_argument(
        "--no-redact",
        dest="redact",
        action="store_false",
        help="with --json: keep secrets (API keys, tokens, passwords) in the texts instead of "
        "[REDACTED] markers",
    )


_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str, default: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """The on/off environment variable ``name`` (``1``/``0``, ``true``/``false``, ``yes``/``no``,
    ``on``/``off``; unset: ``default``). Any other value is a :class:`~sidelight.errors.UsageError`
    (exit 2): ``SIDELIGHT_JSON=maybe`` said nothing and printed text, the wrong output for a script."""
    from sidelight.config import ConfigError

    value = (os.environ if env is None else env).get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ConfigError(f"{name}={value} is neither on nor off; use 1 or 0 (true/false, yes/no, on/off)")


# -- colour ------------------------------------------------------------------------------------------------

COLOR_CHOICES: Final = ("auto", "always", "never")

#: What each kind of text looks like on a terminal (rich style names).
STYLES: Final = {
    "header": "bold",
    "active": "green",
    "idle": "yellow",
    "suspended": "magenta",
    "ended": "dim",
    "error": "bold red",
    "warning": "yellow",
}

#: Whether stdout and stderr get colour in this command (set by :func:`configure_colour`).
_colour = {"stdout": False, "stderr": False}


def colour_wanted(choice: str, stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``stream`` gets colour: ``--color always`` or ``never`` as said; ``auto`` (the default)
    colours a terminal only, unless ``NO_COLOR`` is set to anything (no-color.org: it wins), or
    ``FORCE_COLOR`` is set to anything (force-color.org: a pipe too, as CI logs want)."""
    if choice in ("always", "never"):
        return choice == "always"
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed stream
        return False


def configure_colour(choice: str, *, json: bool = False) -> None:
    """Decide once per command whether stdout and stderr are coloured; ``--json`` output never is (it is
    read by programs)."""
    _colour["stdout"] = not json and colour_wanted(choice, sys.stdout)
    _colour["stderr"] = colour_wanted(choice, sys.stderr)


def colour_on(stream: str = "stdout") -> bool:
    """Whether :func:`paint` colours ``stream`` (``"stdout"`` or ``"stderr"``) in this command."""
    return _colour[stream]


def paint(text: str, kind: str, stream: str = "stdout") -> str:
    """``text`` in the colour of ``kind`` (a key of :data:`STYLES`; anything else stays plain) when
    ``stream`` is coloured, else ``text`` itself."""
    style = STYLES.get(kind)
    if not style or not text or not _colour[stream]:
        return text
    from rich.color import ColorSystem
    from rich.style import Style

    # The 16 standard colours: what every terminal that takes colour at all shows as meant.
    return Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


def log_formatter(fmt: str = "sidelight: %(message)s", datefmt: str | None = None) -> logging.Formatter:
    """The formatter of the command's log lines on stderr: errors and warnings coloured when stderr is."""

    class _Formatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            line = super().format(record)
            if record.levelno >= logging.ERROR:
                return paint(line, "error", "stderr")
            if record.levelno >= logging.WARNING:
                return paint(line, "warning", "stderr")
            return line

    return _Formatter(fmt, datefmt)
