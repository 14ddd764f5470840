"""News within the turn: after a tool call, the model hears when a sibling changed a file this session
has touched (docs/digest.md, "News within the turn").

A host's after-tool hook (``PostToolUse`` of Claude Code, Codex and Qwen Code; the Gemini CLI's
``AfterTool``; GitHub Copilot CLI's ``postToolUse``; the ``after_tool`` event of sidelight's Pi
extension and opencode plugin) reaches :func:`check_after_tool` through the
hook's composer (:mod:`sidelight.features.hook`). Most tool calls collide with nothing, and cost little:

* at most one note per :data:`NEWS_INTERVAL` seconds: an event sooner than that after the last note
  returns at once (one small state file read);
* else the siblings' transcripts are stat'ed against when this session last looked
  (``checked``): none written since, and the event returns (nothing written);
* else the stale-write guard's readers (:mod:`sidelight.features.guard`) find the files this session
  read or wrote (the tail of its transcript: each with its last touch) and the siblings' changes of
  them since then, and since this turn's prompt: a sibling in another worktree of the repository is
  compared by the repository-relative path (a merge conflict in the making).

What it was told is kept per session (``<state dir>/news/SESSION.json``: ``told``, with ``checked`` and
``noted``), recorded once the note was delivered: each change is told once, and the next prompt's
digest leaves out the ``[also touched by you: ...]`` mention of a change told here
(:func:`sidelight.features.told.told_changes`), unless the sibling changed the file again since.
"""

# Hot path (every tool call's after-tool hook): plain str paths and os functions.
# ruff: noqa: PTH113, PTH116, PTH118

from __future__ import annotations

import os

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.features.told import news_file, number, read_news, told_item
from sidelight.statefile import private_dir, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any, Final

    from sidelight.config import Settings
    from sidelight.engine.repos import Repository
    from sidelight.features.guard import Change
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, Session

__all__ = ["NEWS_INTERVAL", "NEWS_LIMIT", "News", "check_after_tool", "record_news"]

logger = get_logger(__name__)

#: At most one note per this many seconds (a turn of many quick tool calls hears one, then the rest
#: of the news at the first tool call after this long: nothing is lost, only held back).
NEWS_INTERVAL: Final = 30.0
#: A note is at most this many characters.
NEWS_LIMIT: Final = 300
#: What a note starts with.
NEWS_HEADER: Final = "[sidelight] while you worked (a report, not instructions):"
#: How many told changes a session remembers (the oldest are forgotten first).
TOLD_KEPT: Final = 256
#: A sibling's line may reach its transcript this long after its time: the changes this long before
#: the last look are read again (the ledger keeps them from being told twice).
SLACK: Final = 5.0


class News:
    """A note for the model after a tool call, and what to remember once it was delivered."""

    __slots__ = ("key", "state", "text", "told")

    def __init__(self, key: str, text: str, told: Sequence[list[Any]], state: dict[str, Any]) -> None:
        self.key = key
        self.text = text
        self.told = list(told)
        self.state = state

    def __repr__(self) -> str:
        return f"News(text={self.text!r})"


def check_after_tool(
    event: HostEvent, settings: Settings, plugins: Plugins, *, now: float | None = None
) -> News | None:
    """The note for the model after the tool call of ``event`` (``None``: nothing to say, the usual
    answer). Raises on internal errors (the composer fails open)."""
    import time

    from sidelight.engine.discovery import current_session, list_sessions, listed_once, siblings_of

    now = time.time() if now is None else now
    with listed_once(settings, plugins):
        session = current_session(event, settings, plugins)
        if session is None:
            return None
        path = news_file(settings, session.key)
        state = read_news(path)
        if now - number(state.get("noted")) < NEWS_INTERVAL:
            return None  # told lately: the rest waits (``checked`` unmoved, so nothing is lost)
        checked = number(state.get("checked"))
        siblings = siblings_of(session, list_sessions(settings, plugins), settings.scope)
        fresh = [s for s in siblings if _written_since(s, checked)]
        if not fresh:
            return None
        news = _news(event, session, fresh, state, checked, settings, plugins)
    if news is None:
        state["checked"] = now
        _write_state(path, state)  # looked: the next event stats against now
        return None
    news.state["checked"] = now  # written with what it told, once delivered
    return news


def _written_since(session: Session, checked: float) -> bool:
    for path in (session.path, *session.extra_paths):
        try:
            if os.stat(path).st_mtime > checked:
                return True
        except OSError:
            continue
    return False


def _news(
    event: HostEvent,
    session: Session,
    siblings: Sequence[Session],
    state: Mapping[str, Any],
    checked: float,
    settings: Settings,
    plugins: Plugins,
) -> News | None:
    from sidelight.engine.reads import decoder_for
    from sidelight.features import resume
    from sidelight.features.guard import sibling_changes, tool_calls

    cwd = os.fspath(event.cwd) if event.cwd is not None else session.directory
    touched: dict[str, float] = {}
    try:
        for when, _name, _kind, paths, command, there in tool_calls(
            os.fspath(session.path), decoder_for(session, plugins), settings, plugins, cwd
        ):
            if when is not None:
                for real in paths if command is None else _named_files(command, there or cwd):
                    touched[real] = when
    except OSError:
        return None  # no transcript yet: it touched nothing
    if not touched:
        return None
    # Within the turn: a change before this turn's prompt was the prompt's digest's to tell.
    floor = max(resume.last_prompt(session, settings) or 0.0, checked - SLACK if checked else 0.0)
    since = {real: max(when, floor) for real, when in touched.items()}
    known = state.get("told")
    told = {(t[0], t[1], number(t[2])) for t in known if told_item(t)} if isinstance(known, list) else set()
    found: list[tuple[Change, str, str | None]] = []  # (change, this session's path, its worktree)
    for group, mapped, back, worktree in _by_worktree(siblings, since, cwd, settings):
        oldest = min(mapped.values())
        for change in sibling_changes(group, mapped, oldest, settings, plugins):
            mine = back.get(change.path, change.path)
            if (mine, change.session.key, change.time) not in told:
                found.append((change, mine, worktree))
    if not found:
        return None
    latest: dict[tuple[str, str], tuple[Change, str, str | None]] = {}
    for item in found:  # the latest change of each file by each sibling
        key = (item[1], item[0].session.key)
        if key not in latest or item[0].time > latest[key][0].time:
            latest[key] = item
    ordered = sorted(latest.values(), key=lambda item: -item[0].time)
    text = _render(ordered, cwd)
    told_now = [[mine, c.session.key, c.time, c.path] for c, mine, _w in found]
    return News(session.key, text, told_now, dict(state))


#: How many words of a shell command are looked at as files it may have read.
COMMAND_WORDS: Final = 32


def _named_files(command: str, cwd: str | None) -> list[str]:
    """The existing files a shell command of this session names (``cat app.py``, ``sed -n 1,9p a.py``):
    it has seen them, at least (real paths; a loose test, as the guard's: words with a dot or a slash)."""
    from sidelight.features.guard import real_path

    out = []
    for word in command.split()[:COMMAND_WORDS]:
        word = word.strip("'\"")
        if word.startswith("-") or ("." not in word and "/" not in word):
            continue  # an option, a program's name: no file (most words cost no stat)
        real = real_path(word, cwd)
        if real is not None and os.path.isfile(real):
            out.append(real)
    return out


def _by_worktree(
    siblings: Sequence[Session], since: Mapping[str, float], cwd: str | None, settings: Settings
) -> list[tuple[list[Session], dict[str, float], dict[str, str], str | None]]:
    """The siblings grouped by where their files are: this session's own paths, or (another worktree of
    its repository) the same repository-relative paths under that worktree's root; per group, the
    files with their times, the way back to this session's path, and the worktree's label."""
    from sidelight.engine.repos import repository_of, within

    groups: dict[str | None, tuple[list[Session], dict[str, float], dict[str, str], str | None]] = {}
    mine: Repository | None = None
    looked = False
    for sibling in siblings:
        there = sibling.directory
        theirs = None
        if settings.scope != "directory" and there and cwd and there != cwd:
            if not looked:
                mine, looked = repository_of(os.path.realpath(cwd)), True
            theirs = None if mine is None else within(mine, os.path.realpath(there))
        if mine is None or theirs is None or theirs.root == mine.root:
            groups.setdefault(None, ([], dict(since), {}, None))[0].append(sibling)
            continue
        if theirs.root not in groups:
            mapped: dict[str, float] = {}
            back: dict[str, str] = {}
            for real, when in since.items():
                relative = mine.relative(real)
                if relative:
                    other = os.path.join(theirs.root, relative)
                    mapped[other] = when
                    back[other] = real
            groups[theirs.root] = ([], mapped, back, theirs.label)
        groups[theirs.root][0].append(sibling)
    return [group for group in groups.values() if group[1]]


def _render(changes: Sequence[tuple[Change, str, str | None]], cwd: str | None) -> str:
    """The note: the header and one line per change, newest first, within :data:`NEWS_LIMIT`."""
    from sidelight.features.digest import short_path
    from sidelight.features.guard import describe
    from sidelight.redact import sanitize

    lines = [NEWS_HEADER]
    size = len(NEWS_HEADER)
    for n, (change, mine, worktree) in enumerate(changes):
        did, when = describe(change, 40)
        where = f" (in worktree {sanitize(worktree, 40)})" if worktree else ""
        line = sanitize(f"- {short_path(mine, cwd)}{where} was {did} {when}, after you read or wrote it", 200)
        rest = len(changes) - n - 1
        more = f"\n+{rest} more" if rest else ""
        if size + 1 + len(line) + len(more) > NEWS_LIMIT:
            if n == 0:
                line = line[: NEWS_LIMIT - size - 1 - len(more) - 1] + "…"
            else:
                lines.append(f"+{rest + 1} more")
                break
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines)


def record_news(news: News, settings: Settings) -> None:
    """Remembers what ``news`` told (called once the note was delivered): each change once, and not
    again in the next prompt's digest."""
    import time

    path = news_file(settings, news.key)
    state = news.state
    known = state.get("told")
    told = [t for t in known if told_item(t)] if isinstance(known, list) else []
    state["told"] = (told + news.told)[-TOLD_KEPT:]
    state["noted"] = time.time()
    _write_state(path, state)


def _write_state(path: Path, state: Mapping[str, Any]) -> None:
    private_dir(path.parent)
    write_atomic(path, jsonio.dumps(state).encode("utf-8"), durable=False)
