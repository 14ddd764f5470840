"""What a host's hook prints: the one place that composes the features (the digest, long-term facts, the
handoff, the welcome back, the session's own context) into the answer to one host event.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sidelight.config import EVENTS_FILE, Settings
from sidelight.digest import get_session_updates
from sidelight.discovery import current_session
from sidelight.plugins import get_plugins

if TYPE_CHECKING:
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent

__all__ = ["LOG_FILE", "handle_hook"]

logger = logging.getLogger(__name__)

#: The hook's log file, in the state directory.
LOG_FILE = "sidelight.log"


def handle_hook(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
) -> str | None:
    """What a host's hook must print for this input (``None``: nothing). Never raises: whatever goes
    wrong is logged to ``<state dir>/sidelight.log`` and the hook stays silent."""
    try:
        settings = settings or Settings.load()
    except Exception:
        logger.exception("cannot load the settings")
        return None
    handler = _log_to_file(settings)
    try:
        plugins = plugins or get_plugins()
        data = payload if isinstance(payload, Mapping) else json.loads(payload or "{}")
        if not isinstance(data, Mapping):
            logger.warning("%s hook input is not a JSON object; nothing injected", host)
            return None
        injector = plugins.injectors().get(host)
        if injector is None:
            logger.warning("no injector for host %r (known: %s)", host, ", ".join(plugins.injectors()))
            return None
        event = injector.read_event(data)
        if event is None:
            logger.warning("%s hook input not understood; nothing injected", host)
            return None
        if event.event == "SessionEnd":
            _record(settings, event)
            _drop_pending(event, settings, plugins)
            return None
        from sidelight.facts import with_long_term  # the [Long-term context] block, where it is due

        if event.event == "SessionStart":
            _record(settings, event)
            text = _on_start(event, settings, plugins)
            return injector.render(event, with_long_term(event, settings, plugins, text))
        from sidelight.recap import handoff

        # A handoff kept for this first prompt (Pi) moves the digest's cursor past what it covers, so it
        # is taken before the digest is read.
        recap = handoff.pending_for_prompt(event, settings, plugins)
        text = get_session_updates(event, settings=settings, plugins=plugins)
        welcome = recap if recap is not None else _welcome_back(event, settings, plugins)
        if welcome is not None:
            text = welcome if text is None else f"{welcome}\n\n{text}"
        return injector.render(event, with_long_term(event, settings, plugins, text))
    except Exception:
        logger.exception("%s hook failed; nothing injected", host)
        return None
    finally:
        if handler is not None:
            logging.getLogger("sidelight").removeHandler(handler)
            with contextlib.suppress(OSError):  # a full disk: the digest still goes out
                handler.close()


def _on_start(event: HostEvent, settings: Settings, plugins: Plugins) -> str | None:
    """At a session's start: a new session's handoff (Pi gets it with its first prompt); for a session
    that comes back after at least ``idle_timeout`` (Claude Code and Codex ``source: resume``, a Pi
    ``session_start``), a welcome back kept for its first prompt (Claude Code drops what a resumed
    session's ``SessionStart`` adds, Pi cannot inject at start); and the ``[SESSION CONTEXT]`` block
    after a compaction or a clear."""
    from sidelight import resume
    from sidelight.recap import handoff

    # A new session gets the previous session's recap (issue 5); Pi gets it with its first prompt.
    recap = handoff.at_session_start(event, settings, plugins)
    if recap is not None:
        return recap
    session = current_session(event, settings, plugins)
    if session is None or not session.path.exists():
        return None
    source = event.raw.get("source")
    if source in ("compact", "clear"):
        # The conversation was just compacted or cleared: the session's own state, as its
        # transcript shows it, is what it lost.
        return resume.context_text(session, settings, plugins)
    if source == "resume" or event.host == "pi":
        last = resume.last_prompt(session, settings)
        text = resume.welcome_back(session, settings, plugins, last_prompt=last)
        if text is not None:
            logger.info("resume context for %s kept for its prompt: %s", session.name, text.split("\n", 1)[0])
            resume.set_pending(session, settings, text)
    return None


def _welcome_back(event: HostEvent, settings: Settings, plugins: Plugins) -> str | None:
    """The welcome back for this prompt, once per absence: the one its session's start kept, else one
    when the session had no prompt or start for ``idle_timeout`` and its transcript has been quiet that
    long (:func:`sidelight.resume.welcome_back`); else ``None``."""
    from sidelight import resume

    session = current_session(event, settings, plugins)
    if session is None:
        return None
    now = time.time()
    previous = resume.mark_prompt(session, settings, now)
    text = resume.take_pending(session, settings)
    if text is None and previous is not None:
        text = resume.welcome_back(session, settings, plugins, now, prompt=event.prompt, last_prompt=previous)
    if text is not None:
        logger.info("resume context for %s with its prompt: %s", session.name, text.split("\n", 1)[0])
    return text


def _drop_pending(event: HostEvent, settings: Settings, plugins: Plugins) -> None:
    """A session that ends before its next prompt loses what was kept for that prompt: the handoff of a
    new Pi session, a welcome back. When it is resumed, its start judges afresh."""
    from sidelight import resume
    from sidelight.recap import handoff

    session = current_session(event, settings, plugins)
    if session is not None:
        handoff.void_pending(session, settings)
        resume.take_pending(session, settings)


def _record(settings: Settings, event: HostEvent) -> None:
    """Appends a session start or end to the events file, for the watcher and `sidelight status`."""
    line = {
        "time": time.time(),
        "host": event.host,
        "event": event.event,
        "session_id": event.session_id,
        "transcript_path": None if event.transcript_path is None else str(event.transcript_path),
        "cwd": None if event.cwd is None else str(event.cwd),
        "source": event.raw.get("source"),
    }
    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(settings.state_dir / EVENTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


class _HookLogHandler(logging.FileHandler):
    """The hook's log file. A record that cannot be written (a full disk) is dropped quietly: logging's
    default prints a traceback on the host's stderr."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _log_to_file(settings: Settings) -> logging.Handler | None:
    """Hook diagnostics go to a log file: a hook's stderr is not a place anyone reads."""
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = settings.state_dir / LOG_FILE
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.close(fd)
        handler = _HookLogHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("sidelight")
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    return handler
