"""The reader: the recent conversation of one session, readable by a person or an agent.

``sidelight read SESSION`` prints the last entries of a session's transcript::

    [21:20] User: Create notes.txt with two lines, then change beta to gamma.
    [21:20] [Bash ls -la → total 8 …]
    [21:20] [Write /tmp/proj/notes.txt → File created successfully at: /tmp/proj/notes.txt]
    [21:20] Assistant: notes.txt now reads alpha, gamma.

Only the conversation: user and assistant text and one line per tool use (its name and primary
argument, and after ``→`` one short line of its result: :func:`result_line`). Thinking, raw tool
output, progress and metadata lines are never shown. The transcript is read backwards from its end, so
a huge file costs the same as a small one.

The agent-facing side is a skill (``SKILL.md``, written by :func:`install_skill`) that tells an agent
when and how to run the reader.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.engine.paths import resumed_paths
from sidelight.engine.reads import decoder_for
from sidelight.engine.scanning import recent_entries
from sidelight.redact import sanitize, sanitize_lines
from sidelight.timestamps import parse_timestamp

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from sidelight.config import Settings
    from sidelight.engine.scanning import FormatArg, PathArg
    from sidelight.plugins import Plugins
    from sidelight.records import Session
    from sidelight.types import Entry

__all__ = [
    "NEWS_MARKER",
    "cut_news",
    "format_entries",
    "install_skill",
    "local_time",
    "read_session",
    "read_session_log",
    "result_line",
    "skill_path",
    "skill_text",
    "tool_line",
]

#: How many characters of one message the reader asks the native core for.
TEXT_LIMIT = 2000
#: How many lines of one message are shown before the rest is elided.
MAX_TEXT_LINES = 12
#: How many characters of a tool's primary argument fit on its line.
ARG_WIDTH = 120
#: How many characters of a tool's result fit on its line (after ``→``).
RESULT_WIDTH = 100


# --- reading ----------------------------------------------------------------------------------------


def read_session_log(path: PathArg, format: FormatArg = "auto", lines: int = 50) -> str:
    """The last ``lines`` conversation entries of the transcript at ``path``, one readable block.

    Each entry starts with its local time (``[HH:MM]``, with the date when the entries span more than
    one day): ``User: …`` and ``Assistant: …`` for text (later lines of a message indented beneath it),
    ``[Tool primary-argument → result]`` for a tool use (``[Edit src/app.py]``,
    ``[Bash npm test → exit 1: 2 failed, 3 passed]``; the result when it was read, see
    :func:`result_line`). Text is cleaned of terminal escapes and control characters. An empty
    transcript gives ``""``.

    Raises what :func:`sidelight.scan` raises for a file it cannot read.
    """
    return format_entries(recent_entries(path, format, lines, text_limit=TEXT_LIMIT))


def format_entries(entries: Sequence[Entry]) -> str:
    """The entries as :func:`read_session_log` shows them (one string, newline-terminated lines)."""
    moments = [local_time(entry.timestamp) for entry in entries]
    days = {moment.date() for moment in moments if moment is not None}
    stamp_format = "%Y-%m-%d %H:%M" if len(days) > 1 else "%H:%M"
    blank = "--:--" if len(days) <= 1 else "----------  --:--"
    out: list[str] = []
    for entry, moment in zip(entries, moments, strict=True):
        stamp = f"[{moment.strftime(stamp_format) if moment is not None else blank}]"
        if entry.role == "tool":
            line = tool_line(entry.tool_name, entry.primary_arg, entry.result, error=entry.result_error)
            out.append(f"{stamp} {line}")
            continue
        speaker = "User" if entry.role == "user" else "Assistant"
        text_lines = _text_lines(entry.text or "")
        if not text_lines:
            continue
        out.append(f"{stamp} {speaker}: {text_lines[0]}")
        indent = " " * (len(stamp) + 1)
        out.extend(indent + line if line else "" for line in text_lines[1:])
    return "".join(line + "\n" for line in out)


def tool_line(
    name: str | None, primary_arg: str | None, result: str | None = None, *, error: bool = False
) -> str:
    """One tool use as the reader and the history show it: ``[Name primary-argument]``, sanitized and
    cut (``[Bash npm test]``, ``[Edit src/app.py]``), with one short line of its ``result`` when given
    (``[Bash npm test → exit 1: 2 failed, 3 passed]``, see :func:`result_line`); never the tool's
    input or output."""
    name = sanitize(name or "tool", 60)
    arg = sanitize(primary_arg or "", ARG_WIDTH)
    shown = f"{name} {arg}" if arg else name
    outcome = result_line(result, error=error)
    return f"[{shown} → {outcome}]" if outcome else f"[{shown}]"


# An exit code as the agents write it (``Exit code: 1``, ``Exit code 1``, ``Process exited with code 1``,
# ``Command exited with code 1``), and the core for the ones a transcript records apart (``Exit code: 1``).
_EXIT_LINE = re.compile(r"(?:exit code:?|(?:process|command) exited with code)\s*(-?\d+)\.?", re.IGNORECASE)
# A command runner's header lines before a command's output (``Chunk ID: …``, ``Wall time: …``).
_RUNNER_HEADER = re.compile(r"(?:chunk id|wall time|original token count|total output lines):", re.IGNORECASE)
# An agent's wrapper of a tool's error.
_ERROR_TAG = re.compile(r"</?tool_use_error>")
# A line that is only a markup element (a client's metadata, ``<usage>…</usage>``): not shown.
_MARKUP_LINE = re.compile(r"<([A-Za-z][\w-]*)>[^<]*</\1>|</?[A-Za-z][\w-]*>")


#: How the news within the turn begins (:data:`sidelight.features.news.NEWS_HEADER`; it is one of
#: :data:`sidelight.features.history.INJECTED_HEADERS` too; tests/test_turn_news.py checks both).
NEWS_MARKER = "[sidelight] while you worked"


def cut_news(result: str) -> str:
    """A tool's ``result`` without the news within the turn a host appended to it (Pi, Qwen Code,
    opencode, GitHub Copilot CLI and the Gemini CLI keep the note in the result): from the line where
    the note begins to the end (a host may join it to the output without a blank line, or wrap it).

    >>> cut_news("ok\n[sidelight] while you worked (a report, not instructions):\n- a.py was edited")
    'ok\n'
    """
    at = result.find(NEWS_MARKER)
    return result if at < 0 else result[: result.rfind("\n", 0, at) + 1]


def result_line(result: str | None, *, error: bool = False) -> str | None:
    """One short line for a tool's ``result`` text (``None`` when there is none): a failure says so
    (``exit 1: …`` for a non-zero exit code, ``error: …`` when the tool said it failed) and shows the
    output's last line, where a command's summary or error usually is; a success shows its first line.
    ``…`` says that more lines followed. Secrets are redacted before a line is chosen; the line is
    sanitized and cut to :data:`RESULT_WIDTH` characters.

    >>> result_line("Exit code 1\\n....F\\n2 failed, 3 passed in 0.1s")
    'exit 1: 2 failed, 3 passed in 0.1s …'
    >>> result_line("File does not exist.", error=True)
    'error: File does not exist.'
    >>> result_line("")
    '(no output)'
    """
    if result is None:
        return None
    from sidelight.redact import redact

    # sidelight's own news within the turn, which most hosts keep in the tool's result, is never shown
    # as what the tool said.
    lines = [line.strip() for line in _ERROR_TAG.sub("", redact(cut_news(result))).splitlines()]
    lines = [line for line in lines if line]
    code: int | None = None
    body: list[str] = []
    if "Output:" in lines[:8]:
        # A command runner's header (exit code, wall time…) and then the output.
        at = lines.index("Output:")
        header, lines = lines[:at], lines[at + 1 :]
        for line in header:
            found = _EXIT_LINE.fullmatch(line)
            if found and code is None:
                code = int(found[1])
    for line in lines:
        found = _EXIT_LINE.fullmatch(line)
        if found and code is None:
            code = int(found[1])
        elif line != "…" and not _RUNNER_HEADER.match(line) and not _MARKUP_LINE.fullmatch(line):
            body.append(line)
    failed = error or (code is not None and code != 0)
    prefix = f"exit {code}" if failed and code not in (None, 0) else "error" if failed else ""
    shown = (body[-1] if failed else body[0]) if body else ""
    if not shown:
        return prefix or "(no output)"
    text = f"{prefix}: {shown}" if prefix else shown
    # A line cut to the width ends with `…` as well: either way, more followed.
    return sanitize(text + (" …" if len(body) > 1 else ""), RESULT_WIDTH)


def read_session(
    session: Session, plugins: Plugins | None = None, lines: int = 50, *, text_limit: int = TEXT_LIMIT
) -> list[Entry]:
    """The last ``lines`` entries of a session's main transcript (its subagent files are not read), each
    text cut to ``text_limit`` characters."""
    return recent_entries(session.path, decoder_for(session, plugins), lines, text_limit=text_limit)


def squeeze_blank_lines(lines: Iterable[str]) -> list[str]:
    """``lines`` without blank lines at either end, and never two blank lines in a row."""
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return kept


def _text_lines(text: str) -> list[str]:
    kept = squeeze_blank_lines(sanitize_lines(text, keep_spacing=True).split("\n"))
    if len(kept) > MAX_TEXT_LINES:
        more = len(kept) - MAX_TEXT_LINES + 1
        kept = [*kept[: MAX_TEXT_LINES - 1], f"… (+{more} more lines)"]
    return kept


def local_time(timestamp: str | None) -> datetime | None:
    """An ISO 8601 timestamp as a local time (``None`` when absent or unreadable)."""
    moment = parse_timestamp(timestamp)
    if moment is None:
        return None
    return moment.astimezone() if moment.tzinfo is not None else moment


# --- finding a session ------------------------------------------------------------------------------


# --- the skill --------------------------------------------------------------------------------------

#: The skill as shipped (``sidelight`` on ``PATH``); :func:`skill_text` puts in the absolute command.
SKILL_FILE = Path(__file__).parents[1] / "integrations" / "skill" / "SKILL.md"


def skill_text(command: str | None = None) -> str:
    """The ``SKILL.md`` text, calling sidelight as ``command`` (default: :func:`sidelight_command`).

    The shipped file's commands are the code lines that start with ``sidelight ``.
    """
    template = SKILL_FILE.read_text(encoding="utf-8")
    return re.sub(r"^sidelight (?=\S)", lambda m: f"{command or sidelight_command()} ", template, flags=re.M)


def sidelight_command() -> str:
    """How to run this sidelight from anywhere: its console script by absolute path, quoted for a shell."""
    script = Path(sys.executable).with_name("sidelight")
    if script.is_file():
        return shlex.quote(str(script.absolute()))
    found = shutil.which("sidelight")
    if found:
        return shlex.quote(str(Path(found).absolute()))
    return f"{shlex.quote(sys.executable)} -m sidelight"


def skill_path(
    scope: str, directory: Path | None, settings: Settings, plugins: Plugins | None = None
) -> Path:
    """Where :func:`install_skill` writes ``SKILL.md``.

    ``directory`` given: ``DIRECTORY/SKILL.md`` whatever the scope (for another agent's skills folder).
    Else ``sessions/SKILL.md`` in the skills folder (:attr:`AgentSpec.skills_dir`) of the agent whose
    host is :data:`sidelight.agents.FALLBACK_HOST`, for the user (scope ``user``) or for the project in
    the current directory (scope ``project``).
    """
    if directory is not None:
        return Path(directory).expanduser() / "SKILL.md"
    if scope not in ("user", "project"):
        raise ValueError(f"unknown scope {scope!r}; use user or project")
    from sidelight.agents import FALLBACK_HOST
    from sidelight.plugins import get_plugins

    agent = (plugins or get_plugins()).agent_of_host(FALLBACK_HOST)
    if agent is None or agent.skills_dir is None:
        raise ValueError("no agent reads skills here; give the folder with --dir")
    return agent.skills_dir(scope, settings) / "sessions" / "SKILL.md"


@dataclass(frozen=True, slots=True)
class SkillInstall:
    """What :func:`install_skill_report` did."""

    path: Path
    #: ``created``, ``updated`` or ``unchanged``.
    action: str
    #: Where a different existing file was moved before it was replaced.
    backup: Path | None = None


def install_skill(scope: str, directory: Path | None, settings: Settings) -> Path:
    """Writes the ``sessions`` skill (see :func:`skill_path` for where) and returns its path.

    Idempotent: the same text is not written again. A different existing file is backed up to
    ``<state dir>/backups/skill/`` before it is replaced (:func:`sidelight.install.install_file`).
    """
    return install_skill_report(scope, directory, settings).path


def install_skill_report(scope: str, directory: Path | None, settings: Settings) -> SkillInstall:
    """:func:`install_skill`, saying whether the file was created, updated (with its backup) or unchanged."""
    from sidelight.install import install_file
    from sidelight.statefile import regular_file_target

    path = skill_path(scope, directory, settings)
    regular_file_target(path)  # a FIFO would block the read below, a device be renamed away
    existed = path.exists()
    text = skill_text()
    result = install_file("skill", path, text, "skill", is_skill, state_dir=settings.state_dir)
    if not result.changed:
        return SkillInstall(path, "unchanged")
    return SkillInstall(path, "updated" if existed else "created", result.backup)


def is_skill(text: str) -> bool:
    """Whether ``text`` is sidelight's skill as this sidelight writes it (uninstall removes only that,
    or what install recorded it wrote)."""
    return text == skill_text()


def describe_sessions(sessions: Iterable[Session]) -> list[dict[str, object]]:
    """One JSON-ready record per session: name, key, id, format, group, resolver, path, size, modified,
    its subagent files and its resumed files (a later file of its own transcript: how many of each, and
    their paths)."""
    out: list[dict[str, object]] = []
    for session in sessions:
        try:
            stat = session.path.stat()
            size: int | None = stat.st_size
            modified: str | None = (
                datetime.fromtimestamp(stat.st_mtime).astimezone().isoformat(timespec="seconds")
            )
        except OSError:
            size = modified = None
        resumed = resumed_paths(session)
        subagents = [path for path in session.extra_paths if path not in resumed]
        out.append(
            {
                "name": session.name,
                "key": session.key,
                "id": session.id,
                "format": session.format,
                "group": session.group,
                "resolver": session.resolver,
                "path": str(session.path),
                "size": size,
                "modified": modified,
                "subagents": len(subagents),
                "subagent_paths": [str(path) for path in subagents],
                "resumed": len(resumed),
                "resumed_paths": [str(path) for path in resumed],
            }
        )
    return out
