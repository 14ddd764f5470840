"""Command ``sidelight hook HOST``: what an agent host runs on every prompt (and, where the guard or the
news within the turn is on, around tool calls). :func:`run_hook` is reached from :func:`sidelight.cli.main`
before any argument parser is built, imports only what the hook needs, and always exits 0: a hook must
never break its host. Anything that goes wrong is logged to ``<state dir>/sidelight.log``. (``install`` and
``uninstall`` are :mod:`sidelight.cli.install`'s: the hook's process does not load them.)
"""

from __future__ import annotations

import os
import sys
import time

# Not ``typing``: this module is imported on every prompt, and ``typing`` costs more than the warm
# path's whole client.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

__all__ = ["register", "run_hook"]


def run_hook(argv: Sequence[str], *, own_process: bool = False) -> int:
    """``sidelight hook HOST``: read the host's hook input from stdin, print what to inject. Always 0.
    ``own_process``: the process is the hook's (not a caller's), and ends here once it answered
    (:func:`_end_process`)."""
    host = argv[0] if argv else ""
    try:
        payload = sys.stdin.buffer.read()
        if not host or len(argv) > 1:
            _log_failure(f"hook: expected one HOST argument, got {list(argv)!r}")
            return 0
        # A running watcher answers in a few milliseconds what this process would take tens of ms to
        # import its way to (sidelight.warm); without one, the hook answers itself. Either way the answer is
        # written and flushed before the cursors move (at least once: a hook killed in between leaves
        # the news for the next prompt).
        from sidelight.warm import ask_watcher

        if ask_watcher(host, payload, deliver=_print) is None:
            from sidelight.features.hook import handle_hook

            handle_hook(host, payload, deliver=_print)
        if own_process:
            _end_process()
    except BaseException as error:  # the promise: a hook never breaks its host
        try:  # noqa: SIM105 (contextlib would cost every prompt an import)
            _log_failure(f"hook {host}: {type(error).__name__}: {error}")
        except BaseException:
            pass
    return 0


def _end_process() -> None:
    """Ends the hook's own process now that its answer is out and its cursors moved (or the watcher
    moves them), when nothing of it is left to save: no other thread, no exit handler (a logger that
    wrote registers logging's; a plugin may register its own), stdout and stderr flushed. The
    interpreter's teardown would cost every prompt 1-2 ms, a tenth of a bare start, to free what the
    kernel frees anyway. Otherwise the process ends as any does."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    import atexit

    if atexit._ncallbacks():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)


def _print(output: str | None) -> bool:
    """Writes the hook's answer to stdout as UTF-8 bytes, whatever the locale's encoding
    (:func:`sidelight.warm.encode_answer`), and flushes it (raises when it cannot: nothing moves
    then)."""
    if output:
        from sidelight.warm import encode_answer  # loaded already: the hook asked the watcher first

        sys.stdout.flush()  # nothing written through the text layer may come after the answer
        out = sys.stdout.buffer
        out.write(encode_answer(output if output.endswith("\n") else output + "\n"))
        out.flush()
    return True


def _log_failure(message: str) -> None:
    """Append one line to ``<state dir>/sidelight.log`` without importing the rest of sidelight."""
    from sidelight.statelayout import LOG_FILE
    from sidelight.warm import failure_log_dir

    state_dir = failure_log_dir(os.environ)
    if state_dir is None:
        return  # the state directory is refused (another user's), and so is the default one
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    line = " ".join(message.split())
    # O_NOFOLLOW as the hook's log handler does: a link in place of the log is not followed.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(os.path.join(state_dir, LOG_FILE), flags, 0o600)
    try:
        from sidelight._fast.logs import private_fd  # imports nothing more: only on a failure

        private_fd(fd)  # a log an older version left 0644
        os.write(fd, f"{stamp} ERROR sidelight.features.hook: {line}\n".encode(errors="replace"))
    finally:
        os.close(fd)


def register(commands: Any) -> None:
    """Adds ``hook`` to the ``sidelight`` parser."""
    hook = commands.add_parser(
        "hook",
        help="run as an agent host's prompt hook (reads its JSON on stdin)",
        description="Read an agent host's hook input (JSON) on stdin and print the digest of what "
        "sibling sessions did since this one last looked, in the host's format, or nothing. Always "
        "exits 0; errors go to <state dir>/sidelight.log.",
    )
    from sidelight.agents import HOOK_HOSTS  # the built-in agents' hosts; plugins may add more

    hook.add_argument("host", metavar="HOST", help=f"the host's hook protocol: {', '.join(HOOK_HOSTS)}")
    hook.set_defaults(run=_hook_command, parser=hook)


def _hook_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    return run_hook([args.host])
