"""Commands ``sidelight watch`` (the watcher, in the foreground), ``sidelight status`` (one row per
session) and ``sidelight suspend`` / ``sidelight resume`` (the host says a session is paused)."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import queue
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Final, TextIO

from sidelight.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXPECTED_ERRORS,
    colour_on,
    env_flag,
    fail,
    json_line,
    log_formatter,
    logger,
    number_option,
    paint,
)
from sidelight.errors import describe

if TYPE_CHECKING:
    from types import FrameType

__all__ = ["register"]


def register(commands: Any) -> None:
    """Adds ``watch``, ``status``, ``suspend`` and ``resume``."""
    watch = commands.add_parser(
        "watch",
        help="follow every session live: lifecycle, hot memory, status snapshot",
        description="Watch the transcripts of every session the resolvers know (every registered "
        "agent's: 'sidelight plugins' lists them), in the foreground until Ctrl-C or SIGTERM. New "
        "lines are read once, in batches; each session's state (active, idle, suspended, ended) and "
        "hot memory are kept, lifecycle events go to the sink plugins, ended sessions are archived, "
        "and a snapshot for 'sidelight status' is written to the state directory. One watcher per "
        "state directory. Durations: 90s, 30m, 8h, 250ms. Each option can also be set in config.toml "
        "under the same name with underscores.",
    )
    watch.add_argument(
        "--idle-timeout",
        metavar="DURATION",
        help="a session without activity this long is idle; twice as long, ended "
        "[env: SIDELIGHT_IDLE_TIMEOUT; default: 30m]",
    )
    watch.add_argument(
        "--max-duration",
        metavar="DURATION",
        help="a session is ended this long after it started [env: SIDELIGHT_MAX_DURATION; default: 8h]",
    )
    watch.add_argument(
        "--polling",
        action="store_const",
        const=True,
        help="poll the folders instead of inotify (network file systems, WSL) [env: SIDELIGHT_POLLING=1]",
    )
    watch.add_argument(
        "--debounce",
        metavar="DURATION",
        help="let a burst of writes settle this long before reading [env: SIDELIGHT_DEBOUNCE; "
        "default: 250ms]",
    )
    watch.add_argument(
        "--reconcile",
        metavar="DURATION",
        help="how often every transcript is checked, for missed events [env: SIDELIGHT_RECONCILE; "
        "default: 10s]",
    )
    watch.add_argument(
        "--archive-transcripts",
        action="store_const",
        const=True,
        help="archive a gzip copy of a transcript with its ended session "
        "[env: SIDELIGHT_ARCHIVE_TRANSCRIPTS=1]",
    )
    watch.add_argument(
        "--stat-appends",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="find appends with a stat pass over the live sessions every debounce period instead of one "
        "file event per write; cheaper when many sessions write at once. Default: chosen at start, the "
        "stat pass past 100 live sessions [env: SIDELIGHT_STAT_APPENDS=true|false|auto]",
    )
    watch.add_argument(
        "--serve-hooks",
        action=argparse.BooleanOptionalAction,
        default=None,  # SIDELIGHT_WARM, read when watch runs (a wrong value is a usage error)
        help="answer the hooks on <state dir>/hook.sock, so that they need not load sidelight themselves "
        "[env: SIDELIGHT_WARM=off turns it off; default: on]",
    )
    watch.set_defaults(run=_watch_command, parser=watch)

    status = commands.add_parser(
        "status",
        help="one row per session: state, last activity, messages, tools, hot memory",
        description="Show each session's name, agent, state, last activity, messages, tool uses by "
        "category (edit, read, command, other) and hot memory count, and whether the hooks are answered "
        "warm by the watcher or in-process. With a running 'sidelight watch' the rows come from its "
        "snapshot; without one, the transcripts are read whole and the state follows from the last "
        "activity, the idle timeout and an end the hooks recorded, by the watcher's own rule (past 1 "
        "GiB of transcripts in all, the least recently written are read from their last 64 KiB and "
        "their counts marked '+'). 'sidelight recap' says the same state.",
    )
    status.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per session (JSON lines): key, name, agent, state, last_activity, "
        "ago_seconds, messages, categories, hot_memory, path, group, current_task, partial, source, time; "
        "who answers the hooks and any problem go to stderr",
    )
    status.add_argument("--watch", action="store_true", help="refresh every second until Ctrl-C")
    status.add_argument(
        "--interval",
        type=number_option(duration=True, minimum=0, above=True, integer=False),
        default=1.0,
        metavar="SECONDS",
        help="refresh period of --watch [default: 1]",
    )
    status.set_defaults(run=_status_command, parser=status)

    for action, verb in (("suspend", "suspend"), ("resume", "lift the suspension of")):
        command = commands.add_parser(
            action,
            help=f"{verb} a session (its timers stop until resumed)"
            if action == "suspend"
            else f"{verb} a session",
            description=f"Tell the running 'sidelight watch' to {verb} SESSION (a name, key, id or id "
            "prefix; 'sidelight sessions' lists them). Without a running watcher it is recorded for the "
            "next one. A suspended session is neither made idle nor ended by the timeouts.",
        )
        command.add_argument(
            "session", metavar="SESSION", help="a session name, key, id, id prefix or transcript path"
        )
        command.add_argument(
            "--json",
            action="store_true",
            help="one JSON object: session, key, state, changed, watcher",
        )
        command.set_defaults(run=_request_command, parser=command, action=action)


def _watch_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import ConfigError, Settings
    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker
    from sidelight.plugins import get_plugins
    from sidelight.watch.options import watch_options
    from sidelight.watch.runtime import WatcherRunningError
    from sidelight.watch.watcher import Watcher

    _foreground_logging(args)
    try:
        if args.serve_hooks is None:
            args.serve_hooks = env_flag("SIDELIGHT_WARM", default=True)
        settings = Settings.load()
        options = watch_options(
            settings,
            idle_timeout=args.idle_timeout,
            max_duration=args.max_duration,
            polling=args.polling,
            debounce=args.debounce,
            reconcile=args.reconcile,
            archive_transcripts=args.archive_transcripts,
            stat_appends=args.stat_appends,
        )
    except ConfigError as error:
        parser.error(str(error))
    plugins = get_plugins()
    tracker = SessionTracker(
        LifecycleSettings(
            idle_timeout=options.idle_timeout,
            max_duration=options.max_duration,
            archive_transcripts=options.archive_transcripts,
        )
    )
    watcher = Watcher(
        settings,
        plugins,
        tracker=tracker,
        polling=options.polling,
        debounce=options.debounce,
        reconcile_interval=options.reconcile,
        modify_events=None if options.stat_appends is None else not options.stat_appends,
        own_gc=True,
        serve_hooks=args.serve_hooks,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            watcher.start()
        except WatcherRunningError as error:
            logger.error("%s", error)
            return EXIT_FAILED
        except OSError as error:  # a state directory it cannot write (a full disk): one true line
            logger.error("cannot start watching: %s", describe(error))
            return EXIT_FAILED
        _timestamps()
        logger.info(
            "idle after %s, ended after %s or %s in all; Ctrl-C stops",
            args.idle_timeout or _duration(options.idle_timeout),
            _duration(2 * options.idle_timeout),
            _duration(options.max_duration),
        )
        while not stop.wait(0.5):
            if not watcher.running:
                break
        watcher.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if watcher.error is not None:
        logger.error("the watcher failed: %s", describe(watcher.error))
        return EXIT_FAILED
    return EXIT_OK


def _duration(seconds: float) -> str:
    from sidelight.features.lifecycle import format_duration

    return format_duration(seconds)


def _foreground_logging(args: argparse.Namespace) -> None:
    """A long-running command says what it does (info) unless told otherwise, through a
    :class:`LogOutput`: a log output that nobody reads never holds up the watcher's worker."""
    if args.verbose - args.quiet == 0 and not os.environ.get("SIDELIGHT_LOG_LEVEL"):
        logger.setLevel(logging.INFO)
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler.stream, LogOutput):
            output = LogOutput(handler.stream)
            handler.setStream(output)
            # Before logging's own flush at exit: what is still queued gets a moment to come out.
            atexit.register(output.close)


#: How many log lines may wait for a log output that does not take them; later ones are dropped (and
#: counted) until it does.
LOG_BACKLOG: Final = 10_000
#: At exit, how long the queued log lines may take to come out.
LOG_DRAIN: Final = 2.0


class LogOutput:
    """The stream of the watcher's log handler: a write queues the line and returns, and a thread of
    its own writes the lines out. The worker thread logs as it scans (a line for every rotation or
    deletion it notices): written in place, a log line into a pipe nobody reads blocked it for good
    once the pipe held 64 KiB, and it stopped scanning (the soak's failing run, issue 18). Past
    ``backlog`` waiting lines, new ones are dropped; a line says how many once the output takes them
    again."""

    def __init__(self, stream: TextIO, backlog: int = LOG_BACKLOG) -> None:
        self.stream = stream
        self._lines: queue.Queue[str | None] = queue.Queue(max(1, backlog))
        self._dropped = 0
        self._lock = threading.Lock()  # guards _dropped
        self._thread = threading.Thread(target=self._write_out, name="sidelight-log", daemon=True)
        self._thread.start()

    def write(self, text: str) -> int:
        try:
            self._lines.put_nowait(text)
        except queue.Full:
            with self._lock:
                self._dropped += 1
        return len(text)

    def flush(self) -> None:
        """Nothing: the writing thread flushes after each line (a flush here could block too)."""

    def close(self, timeout: float = LOG_DRAIN) -> bool:
        """Waits up to ``timeout`` seconds for the queued lines to be written, then ends the writing
        thread; whether everything came out (if not, the thread is left to the output, a daemon)."""
        deadline = time.monotonic() + timeout
        while self._lines.unfinished_tasks:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        self._lines.put(None)
        self._thread.join(max(0.0, deadline - time.monotonic()))
        return True

    def _write_out(self) -> None:
        stream, lines = self.stream, self._lines
        while True:
            text = lines.get()
            if text is None:
                return
            try:
                stream.write(text)
                if lines.empty():
                    with self._lock:
                        dropped, self._dropped = self._dropped, 0
                    if dropped:
                        stream.write(f"sidelight: {dropped} log lines dropped: the log output was blocked\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken output: nothing to say it on
            finally:
                lines.task_done()


def _timestamps() -> None:
    """Once running, each log line carries its time."""
    for handler in logger.handlers:
        handler.setFormatter(log_formatter("%(asctime)s sidelight: %(message)s", "%H:%M:%S"))


def _status_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import ConfigError, Settings
    from sidelight.plugins import get_plugins
    from sidelight.watch.runtime import make_state_private
    from sidelight.watch.status import collect_status, render_table

    try:
        settings = Settings.load()
        make_state_private(settings.state_dir)  # once, not at every --interval
        collect_status_args = (settings, get_plugins())
        report = collect_status(*collect_status_args)
    except ConfigError as error:
        parser.error(str(error))
    painter = paint if colour_on() else None
    if not args.watch:
        if args.json:
            _status_json(report)
        else:
            sys.stdout.write(render_table(report, painter))
        return EXIT_OK
    interval = max(0.1, args.interval)
    try:
        if args.json:
            while True:
                _status_json(report)
                sys.stdout.flush()
                time.sleep(interval)
                report = collect_status(*collect_status_args)
        elif sys.stdout.isatty() and _has_rich():
            from rich.console import Console
            from rich.live import Live

            from sidelight.watch.status import rich_table

            console = Console(no_color=not colour_on(), highlight=False)
            with Live(rich_table(report), console=console, auto_refresh=False) as live:
                while True:
                    time.sleep(interval)
                    live.update(rich_table(collect_status(*collect_status_args)), refresh=True)
        else:
            clear = "\x1b[H\x1b[2J" if sys.stdout.isatty() else ""
            while True:
                sys.stdout.write(clear + render_table(report, painter) + ("" if clear else "\n"))
                sys.stdout.flush()
                time.sleep(interval)
                report = collect_status(*collect_status_args)
    except KeyboardInterrupt:
        return EXIT_OK


def _status_json(report: Any) -> None:
    """``status --json``: the rows on stdout; what is no row (no session found, a problem, who answers
    the hooks) as log lines on stderr."""
    from sidelight.watch.status import nothing_found, print_json

    print_json(report, sys.stdout)
    if not report.rows:
        logger.warning("%s", nothing_found(report))
    for problem in report.problems:
        logger.warning("problem: %s", problem)
    logger.info("%s", report.hooks.line(report.watcher_pid))


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _request_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sidelight.config import Settings
    from sidelight.plugins import get_plugins
    from sidelight.watch.requests import request_resume, request_suspend
    from sidelight.watch.runtime import read_snapshot

    suspend = args.action == "suspend"
    try:
        settings = Settings.load()
        session = watched_session(args.session, settings, get_plugins())
        suspended = {str(k) for k in (read_snapshot(settings) or {}).get("suspended") or ()}
        # Said once: a second suspend (or a resume of what is not suspended) changes nothing and says so.
        changed = (session.key in suspended) != suspend
        live = False
        if changed:
            live = (request_suspend if suspend else request_resume)(session.key, settings)
    except EXPECTED_ERRORS as error:
        return fail(error)
    if args.json:
        state = "suspended" if suspend else "resumed"
        json_line(
            {"session": session.name, "key": session.key, "state": state, "changed": changed, "watcher": live}
        )
    elif not changed:
        now = "already suspended" if suspend else "not suspended"
        sys.stdout.write(f"{session.name} ({session.key}) is {now}: nothing to do\n")
    else:
        done = "suspended" if suspend else "resumed"
        where = "the running watcher applies it" if live else "recorded for the next 'sidelight watch'"
        sys.stdout.write(f"{done} {session.name} ({session.key}): {where}\n")
    return EXIT_OK


def watched_session(spec: str, settings: Any, plugins: Any) -> Any:
    """The session ``spec`` names, as the watcher knows it. A transcript path is the listed session of
    that transcript: the watcher keys sessions by their resolver's key, so a suspension recorded under
    ``path:...`` held nothing. A path that is no transcript (``/etc/passwd``) or a transcript no resolver
    lists is refused: there is nothing the watcher could hold."""
    from pathlib import Path

    from sidelight.engine.discovery import SessionNotFoundError, list_sessions, resolve_session
    from sidelight.engine.scanning import detect_format
    from sidelight.errors import UnknownFormatError

    session = resolve_session(spec, settings, plugins)
    if session.resolver != "path":
        return session
    if session.format == "auto" and detect_format(session.path) is None:
        raise UnknownFormatError(
            f"{spec}: not a transcript (no agent's transcript starts like this); "
            "pass a session name, id or transcript ('sidelight sessions' lists them)",
            spec,
        )
    target = Path(session.path).resolve()
    for listed in list_sessions(settings, plugins):
        if Path(listed.path).resolve() == target:
            return listed
    raise SessionNotFoundError(
        f"{spec}: no session the watcher follows has this transcript; 'sidelight sessions' lists them"
    )
