"""The ``sidelight`` command line's parser, its ``scan`` command and its logging (``sidelight hook``
never gets here: :func:`sidelight.cli.main` answers it first).

Results go to stdout; messages go through the ``sidelight`` logger to stderr, one line each, never a
traceback. Every option can also be set with an environment variable (shown in ``--help``).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from sidelight.cli.common import (
    COLOR_CHOICES,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    configure_colour,
    env_flag,
    faithful,
    format_option,
    json_line,
    log_formatter,
    logger,
    no_redact_option,
    paint,
    run,
)
from sidelight.errors import describe
from sidelight.formats import DEFAULT_TEXT_LIMIT

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from sidelight.types import Activity, ScanFailure

__all__ = ["COMMAND_MODULES", "build_parser", "run_command"]


LOG_LEVELS = ("debug", "info", "warning", "error")
#: Exit codes: every path scanned; some path failed; the command line itself was wrong.

#: The most characters of a tool's ``old_text``/``new_text`` (the core's ``DETAIL_CHARS``).
DETAIL_CHARS = 100

# Human output: how much of a text, of a list of tools or files, and of one path fit on a line.
TEXT_WIDTH = 100
LIST_WIDTH = 120
PATH_WIDTH = 60


#: Modules that add commands: each has ``register(commands)``, which adds its subparsers and sets
#: ``run=`` (``run(parser, args) -> int``) and ``parser=`` defaults on them.
COMMAND_MODULES: tuple[str, ...] = (
    "sidelight.cli.read",
    "sidelight.cli.context",
    "sidelight.cli.hooks",
    "sidelight.cli.install",
    "sidelight.cli.plugins",
    "sidelight.cli.watch",
    "sidelight.cli.history",
    "sidelight.cli.recap",
    "sidelight.cli.dashboard",
    "sidelight.cli.mcp",
    "sidelight.cli.completion",
)


def build_parser() -> argparse.ArgumentParser:
    # argparse is imported here, not with the module: the prompt hook (`main`'s fast path) never needs it.
    import argparse

    class _Parser(argparse.ArgumentParser):
        """An argument parser whose usage errors are one line on stderr, like every other error, and
        point to the help of the command they are about (``sidelight status --help``)."""

        def error(self, message: str) -> NoReturn:
            self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    class _Top(_Parser):
        """The ``sidelight`` parser: bare ``sidelight`` prints the help (exit 0); a mistyped command gets
        the nearest ones (did you mean); an unknown option is named, by the parser of the command it
        was given to."""

        def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
            given = list(sys.argv[1:] if args is None else args)
            if not given:
                self.print_help()
                self.exit(EXIT_OK)
            _check_command(self, given)
            parsed, unknown = self.parse_known_args(given, namespace)
            if unknown:
                owner = getattr(parsed, "parser", None)
                if owner is None or given.index(unknown[0]) < given.index(parsed.command or ""):
                    owner = self
                owner.error(f"unrecognized arguments: {' '.join(unknown)}")
            if parsed.command is None:
                self.error("no COMMAND given")
            return parsed

    class _Version(argparse.Action):
        """``--version``, looked up only when asked for (reading package metadata is slow to import)."""

        def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

        def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
            from sidelight import __version__

            sys.stdout.write(f"sidelight {__version__}\n")
            parser.exit(EXIT_OK)

    parser = _Top(
        prog="sidelight",
        description="Count what AI coding agents did, from their transcripts (the agents sidelight "
        "knows: 'sidelight plugins' lists them).",
        epilog="Environment: SIDELIGHT_LOG_LEVEL (debug, info, warning, error) sets the verbosity.",
    )
    parser.add_argument("-V", "--version", action=_Version)
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say more (-vv: debug details); also after the command",
    )
    parser.add_argument(
        "-q", "--quiet", action="count", default=0, help="say only errors; also after the command"
    )
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        metavar="WHEN",
        help="colour headers, states and errors: auto (on a terminal, unless NO_COLOR is set; "
        "FORCE_COLOR forces it), always or never; never with --json; also after the command",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    scan = commands.add_parser(
        "scan",
        help="count the activity in transcripts",
        description="Count messages, tool uses and touched files in each transcript, one block or "
        "JSON line per file. A file that cannot be read is reported on stderr, the others still "
        "are, and the exit code is 1.",
    )
    scan.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="transcript files (.jsonl), folders (every *.jsonl under them) or - (standard input)",
    )
    format_option(scan, "every file's format")
    scan.add_argument(
        "--json",
        action="store_true",
        default=None,  # SIDELIGHT_JSON, checked when scan runs (a wrong value is a usage error)
        help="print one JSON object per file (JSON lines): texts and paths as the transcript has "
        "them, secrets redacted, a 'cut' list naming what was cut [env: SIDELIGHT_JSON=1]",
    )
    no_redact_option(scan)
    scan.set_defaults(run=_scan_command, parser=scan)
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(commands)
    for command in commands.choices.values():
        _add_global_options(command)
    return parser


#: The global options that take a value (``--color WHEN``): what :func:`_check_command` skips to find the
#: command's name.
_VALUED = ("--color",)


def _check_command(parser: argparse.ArgumentParser, given: Sequence[str]) -> None:
    """A usage error for a COMMAND that is none, naming the nearest commands (``stauts``: did you mean
    ``status``?); ``difflib`` is imported only then."""
    import argparse

    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    skip = False
    for word in given:
        if skip:
            skip = False
        elif word == "--":
            return
        elif word.startswith("-"):
            skip = word in _VALUED
        elif word in commands:
            return
        else:
            import difflib

            near = difflib.get_close_matches(word, list(commands), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            parser.error(f"unknown command {word!r}{hint}")


#: The global options a command also takes after its name (``sidelight watch -v``), as uv and ruff do;
#: :func:`run_command` adds them to the ones given before it.
_AFTER = {"verbose": "verbose_after", "quiet": "quiet_after"}


def _add_global_options(command: argparse.ArgumentParser) -> None:
    """``-v``/``-q`` (and ``--color``) on ``command`` too, out of its ``--help`` (the top-level one shows
    them), counted apart: a subcommand's namespace would otherwise overwrite what was given before the
    command."""
    import argparse

    taken = {option for action in command._actions for option in action.option_strings}
    for name, dest in _AFTER.items():
        names = [option for option in (f"-{name[0]}", f"--{name}") if option not in taken]
        if names:
            command.add_argument(
                *names, dest=dest, action="count", default=argparse.SUPPRESS, help=argparse.SUPPRESS
            )
    if "--color" not in taken:
        command.add_argument(
            "--color",
            dest="color_after",
            choices=COLOR_CHOICES,
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


def run_command(argv: Sequence[str] | None = None) -> int:
    """Every command but the hook: parse the command line, set up logging, run the command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for before, after in _AFTER.items():
        setattr(args, before, getattr(args, before) + getattr(args, after, 0))
    args.color = getattr(args, "color_after", args.color)
    # Before logging is set up: its error and warning lines are coloured or not by it.
    configure_colour(args.color, json=bool(getattr(args, "json", False)))
    _configure_logging(args.verbose - args.quiet)
    return run(args.run, args.parser, args)


def _scan_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.engine.scanning import scan, scan_many
    from sidelight.types import ScanFailure

    if args.json is None:
        try:
            args.json = env_flag("SIDELIGHT_JSON")
        except ValueError as error:
            parser.error(str(error))
        configure_colour(args.color, json=args.json)

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="sidelight-stdin-") as scratch:
        paths, shown, failures = _scan_paths(args.paths, scratch)
        results: list[Activity | ScanFailure]
        listed = _listed_scans(paths) if args.format == "auto" else {}
        order = {path: n for n, path in enumerate(paths)}
        if listed:
            paths = [path for path in paths if path not in listed]
        if not paths:
            results = []
        elif len(paths) == 1:
            try:
                results = [scan(paths[0], args.format, text_limit=DEFAULT_TEXT_LIMIT + 1)]
            except (OSError, ValueError) as error:
                results = [ScanFailure(paths[0], error)]
        else:
            results = scan_many(paths, args.format, text_limit=DEFAULT_TEXT_LIMIT + 1)
        if args.format != "auto":
            results = [_wrong_format(result, args.format) for result in results]
        # In the order the paths were given, whoever read them.
        results = sorted([*listed.values(), *results], key=lambda r: order.get(r.path, len(order)))
    results = [*failures, *results]

    out = sys.stdout
    failed = 0
    first_block = True
    scanned: list[Activity] = []
    for result in results:
        if isinstance(result, ScanFailure):
            failed += 1
            name = shown.get(result.path, result.path)
            # An error may name the file itself (a format not detected): standard input's copy is "-".
            logger.error("%s", describe(result.error, name).replace(result.path, name))
            continue
        name = shown.get(result.path, result.path)
        scanned.append(result)
        logger.info("%s: %d lines, %d bytes", name, result.lines, result.bytes_consumed)
        if args.json:
            _print_json(result, out, name, redact=args.redact)
        else:
            if not first_block:
                out.write("\n")
            _print_human(result, out, name)
            first_block = False
        out.flush()
    if scanned and not args.json and (len(results) > 1 or any(Path(p).is_dir() for p in args.paths)):
        out.write("\n" + _totals(scanned, failed) + "\n")
    if failed:
        logger.info("%d of %d files could not be scanned", failed, len(results))
        return EXIT_FAILED
    return EXIT_OK


def _totals(scanned: Sequence[Activity], failed: int) -> str:
    """The line ``scan`` ends with when it read several files: what it counted in all of them."""
    messages = sum(a.messages.user + a.messages.assistant for a in scanned)
    by_category = {
        name: sum(a.categories[name] for a in scanned) for name in ("edit", "read", "command", "other")
    }
    tools = sum(by_category.values())
    files = len({path for a in scanned for path in a.files_touched})
    shown = ", ".join(f"{count} {name}" for name, count in by_category.items() if count)
    line = (
        f"total: {_count(len(scanned), 'transcript')}, {_count(messages, 'message')}, "
        f"{_count(tools, 'tool use')}{f' ({shown})' if shown else ''}, {_count(files, 'file')} touched"
    )
    return line + (f"; {failed} could not be scanned" if failed else "")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _listed_scans(paths: Sequence[str]) -> dict[str, Activity | ScanFailure]:
    """The scans of the ``paths`` whose format the first lines do not tell but a resolver knows (an
    opencode export, a plugin's format), read as every other command reads that session's
    transcript (:func:`sidelight.engine.reads.scan_reads`), so that ``scan`` counts what ``status`` does."""
    import os

    from sidelight.engine.scanning import detect_format
    from sidelight.types import ScanFailure

    unknown = []
    for path in paths:
        try:
            if detect_format(path) is None:
                unknown.append(path)
        except (OSError, ValueError):
            continue  # the scan says why
    if not unknown:
        return {}
    from sidelight.config import Settings
    from sidelight.engine.discovery import list_sessions
    from sidelight.engine.reads import TranscriptRead, scan_reads
    from sidelight.plugins import get_plugins

    plugins = get_plugins()
    by_path = {}
    for session in list_sessions(Settings.load(), plugins):
        for transcript in (session.path, *session.extra_paths):
            by_path[os.path.realpath(transcript)] = (session, transcript)
    reads = [
        TranscriptRead(*by_path[os.path.realpath(path)], None, first_look=False)
        for path in unknown
        if os.path.realpath(path) in by_path
    ]
    found: dict[str, Activity | ScanFailure] = {}
    wanted = [path for path in unknown if os.path.realpath(path) in by_path]
    for path, result in zip(wanted, scan_reads(reads, plugins), strict=True):
        found[path] = ScanFailure(path, result) if isinstance(result, Exception) else result
    return found


def _wrong_format(result: Activity | ScanFailure, forced: str) -> Activity | ScanFailure:
    """A scan with ``--format`` that counted nothing in a file of another known format is a failure
    that says so, not a row of zeros: the decoder read lines it does not know."""
    from sidelight.engine.scanning import detect_format
    from sidelight.types import ScanFailure

    if isinstance(result, ScanFailure) or result.messages.total or result.categories.total:
        return result
    try:
        found = detect_format(result.path)
    except OSError:
        return result
    if found is None or found.value == forced:
        return result
    problem = ValueError(
        f"reads as {found.value}, not {forced}: drop --format, or give --format {found.value}"
    )
    return ScanFailure(result.path, problem)


def _scan_paths(
    arguments: Sequence[str], scratch: str
) -> tuple[list[str], dict[str, str], list[ScanFailure]]:
    """The files ``scan`` reads for its ``PATH`` arguments: ``-`` is standard input (copied into
    ``scratch``, the core reads regular files only), a directory is every ``*.jsonl`` file under it
    (recursively, in name order; none is one failure); with the names to show for them, and the
    failures found on the way."""
    from pathlib import Path

    from sidelight.types import ScanFailure

    paths: list[str] = []
    shown: dict[str, str] = {}
    failures: list[ScanFailure] = []
    for argument in arguments:
        if argument == "-":
            if "-" in shown.values():
                continue  # standard input is read once
            copy = Path(scratch) / "stdin.jsonl"
            copy.write_bytes(sys.stdin.buffer.read())
            paths.append(str(copy))
            shown[str(copy)] = "-"
        elif Path(argument).is_dir():
            found = sorted(str(path) for path in Path(argument).rglob("*.jsonl") if path.is_file())
            if not found:
                failures.append(
                    ScanFailure(argument, ValueError("no transcripts (*.jsonl) under this folder"))
                )
            paths.extend(found)
        else:
            paths.append(argument)
    return paths, shown, failures


def _print_json(activity: Activity, out: TextIO, name: str, *, redact: bool = True) -> None:
    """One scan as data: texts and paths as the transcript has them (:func:`faithful`; the scan asked
    the core for :data:`DEFAULT_TEXT_LIMIT` characters plus one, to know which texts were cut), secrets
    redacted unless ``--no-redact``; a ``cut`` list names what was cut, in the record and in each tool
    use."""
    from sidelight._core import FILES_TOUCHED_KEPT

    record = faithful(
        activity.as_dict(),
        {
            "first_user_text": DEFAULT_TEXT_LIMIT,
            "last_user_text": DEFAULT_TEXT_LIMIT,
            "last_assistant_text": DEFAULT_TEXT_LIMIT,
            "title": None,
            "cwd": None,
        },
        redact=redact,
    )
    if redact:  # a secret in a file's name too (the scanned file's own path is the caller's: kept)
        from sidelight.redact import redact as redacted

        record["files_touched"] = [redacted(path) for path in record["files_touched"]]
    for use in record["tool_uses"]:
        faithful(use, {"primary_arg": DEFAULT_TEXT_LIMIT, "old_text": None, "new_text": None}, redact=redact)
        # The core cuts a tool's details to DETAIL_CHARS and says nothing: one that long may be cut.
        use["cut"] += [key for key in ("old_text", "new_text") if len(use[key] or "") >= DETAIL_CHARS]
    if activity.categories.total > len(activity.tool_uses):
        record["cut"].append("tool_uses")  # the newest TOOL_USES_KEPT only
    if len(activity.files_touched) >= FILES_TOUCHED_KEPT:
        record["cut"].append("files_touched")
    if name != activity.path:  # standard input, scanned from a copy whose cursor would lead nowhere
        record.update(path=name, cursor=None)
    record["skipped_lines"] = {**activity.skipped.as_dict(), "total": activity.skipped.total}
    json_line(record, out)


def _print_human(activity: Activity, out: TextIO, name: str) -> None:
    rows: list[tuple[str, str]] = [("format", activity.format.value)]
    if activity.title:
        rows.append(("title", _clean(activity.title)))
    messages = activity.messages
    rows.append(("messages", f"{messages.user} user, {messages.assistant} assistant"))
    categories = activity.categories
    if categories.total:
        by_category = ", ".join(f"{count} {name}" for name, count in categories.as_dict().items() if count)
        top = sorted(activity.tools.items(), key=lambda item: (-item[1], item[0]))
        head = f"{categories.total} ({by_category}): "
        names = _fit([f"{_clean(name, 40)} {count}" for name, count in top], LIST_WIDTH - len(head))
        rows.append(("tools", head + names))
    else:
        rows.append(("tools", "none"))
    files = activity.files_touched
    if files:
        head = f"{len(files)} touched: "
        shown = _fit([_short_path(path, activity.cwd) for path in files], LIST_WIDTH - len(head))
        rows.append(("files", head + shown))
    if activity.first_user_text:
        rows.append(("first user", _quote(activity.first_user_text)))
    if activity.last_assistant_text:
        rows.append(("last reply", _quote(activity.last_assistant_text)))
    if activity.first_timestamp or activity.last_timestamp:
        span = f"{activity.first_timestamp or '?'} → {activity.last_timestamp or '?'}"
        rows.append(("time", span))
    skipped = activity.skipped
    if skipped.total:
        reasons = ", ".join(f"{name} {count}" for name, count in skipped.as_dict().items() if count)
        lines = "line" if skipped.total == 1 else "lines"
        rows.append(("skipped", f"{skipped.total} {lines} ({reasons})"))
    out.write(paint(_clean(name, 1000), "header") + "\n")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        out.write(f"  {label:<{width}}  {value}\n")


def _fit(items: list[str], width: int) -> str:
    """As many of ``items`` as fit in ``width`` characters (at least one), then how many were left out."""
    shown: list[str] = []
    used = 0
    for index, item in enumerate(items):
        more = f" (+{len(items) - index} more)"
        if shown and used + len(item) + len(more) > width:
            return ", ".join(shown) + f" (+{len(items) - index} more)"
        shown.append(item)
        used += len(item) + 2
    return ", ".join(shown)


def _short_path(path: str, cwd: str | None) -> str:
    """``path`` relative to the session's directory when inside it; long paths keep their end."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1 :]
    path = _clean(path, 10_000)
    return path if len(path) <= PATH_WIDTH else "…" + path[-(PATH_WIDTH - 1) :]


def _quote(text: str) -> str:
    return f'"{_clean(text)}"'


def _clean(text: str, width: int = TEXT_WIDTH) -> str:
    """One line of at most ``width`` characters, as every output shows transcript text: control
    characters and terminal escapes removed, secrets redacted, frame markers defanged. ``scan`` prints
    what a transcript holds to a person, and its output is pasted on: it redacts like the rest."""
    from sidelight.redact import sanitize

    return sanitize("".join(ch if ch.isprintable() else " " for ch in text), width)


def _configure_logging(verbosity: int) -> None:
    env_level = os.environ.get("SIDELIGHT_LOG_LEVEL", "").strip().upper()
    if verbosity == 0 and env_level in {name.upper() for name in LOG_LEVELS}:
        level = getattr(logging, env_level)
    else:
        level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(
            verbosity, logging.DEBUG if verbosity > 1 else logging.ERROR
        )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(log_formatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    if env_level and env_level not in {name.upper() for name in LOG_LEVELS}:
        # A misspelt level is said, not ignored (issue 21); the command still runs.
        logger.warning(
            "SIDELIGHT_LOG_LEVEL=%s is no level; use %s (ignored)",
            os.environ["SIDELIGHT_LOG_LEVEL"].strip(),
            ", ".join(LOG_LEVELS),
        )
