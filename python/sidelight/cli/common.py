"""What every command shares: its exit codes, its logger, and the one line it says an error in.

A command returns :data:`EXIT_OK` or :data:`EXIT_FAILED`; an error a person can act on (a session that
does not exist, a file that cannot be read, a bad setting: :data:`EXPECTED_ERRORS`) is said by
:func:`fail` as one line on stderr. :func:`run` calls a command for ``main``: what escapes a command is
an internal error, said as one line too (``-vv`` logs the traceback), never a traceback on stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Final

from sidelight.errors import SidelightError, UsageError, describe

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXPECTED_ERRORS",
    "FORMAT_CHOICES",
    "fail",
    "format_option",
    "logger",
    "number_option",
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

#: What ``--format`` takes on every command that reads a transcript.
FORMAT_CHOICES: Final = ("auto", "claude-code", "pi", "codex", "gemini", "qwen", "copilot")

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
    """``-f/--format`` on ``command``: one of :data:`FORMAT_CHOICES`, ``SIDELIGHT_FORMAT`` by default
    (checked like the option: a wrong one is a usage error, exit 2)."""
    import argparse

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in FORMAT_CHOICES:
            raise argparse.ArgumentTypeError(
                f"unknown format {text!r}; use one of {', '.join(FORMAT_CHOICES)}"
            )
        return value

    command.add_argument(
        "-f",
        "--format",
        type=parse,
        default=os.environ.get("SIDELIGHT_FORMAT", "auto"),  # a string default goes through type=
        metavar="FORMAT",
        help=f"{what}: auto (detect from the first lines), claude-code, pi, codex, gemini, qwen or "
        "copilot [env: SIDELIGHT_FORMAT; default: auto]",
    )
