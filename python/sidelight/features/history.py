"""Short-term history for hosts: a session's recent conversation as messages, capped, oldest first.

A host that calls a model itself (a Discord bot, a mail agent) sends the recent conversation of a
channel with each request, and wants it back after a restart. :func:`history` serves it from the
transcripts sidelight already reads::

    >>> messages = sidelight.history(("discord", "1234"), max_messages=20, max_tokens=8192)  # doctest: +SKIP
    >>> [m.as_dict() for m in messages]  # {"role", "content", "timestamp"}, oldest first  # doctest: +SKIP

**Messages.** A ``user`` message is one prompt a person wrote; an ``assistant`` message is everything the
agent did between two prompts: its text, and one short ``[Tool primary-argument → result]`` line per tool
use (the reader's :func:`~sidelight.features.reader.tool_line`: ``[Bash npm test → exit 1: 2 failed, 3
passed]``,
``[Edit src/app.py → The file src/app.py has been updated successfully.]``), never a tool's raw input or
output: a result is one line of at most 100 characters (:func:`~sidelight.features.reader.result_line`: a
failure's last line after ``exit N:`` or ``error:``, a success's first line), shown when the result's
line is among those read. A command the person ran, Pi's ``!command``, is a ``user`` message
``[bashExecution ls → …]``. A run of more than :data:`TOOL_RUN_KEPT` tool uses keeps its last ones after a
``[+N more tool uses]`` line. Thinking, metadata and synthetic prompts are never messages (the native
decoders leave them out, docs/activity.md), nor is anything sidelight injected itself (the
``[Session Activity]`` digest, ``[SESSION CONTEXT]``, the welcome back, the handoff, the long-term
context, and every format's ``injected_markers``): such blocks are cut out of a message, and a message
left empty is dropped. Text is cleaned of terminal escapes and invisible characters and its secrets are
redacted (:mod:`sidelight.redact`); line breaks and indentation are kept.

**Caps.** At most ``max_messages`` messages and ``max_tokens`` tokens (each message costs its content's
tokens plus :data:`MESSAGE_OVERHEAD`), counted by :func:`sidelight.tokens.get_counter` (the fast
estimate unless a plugin's counter is chosen). The newest messages are kept. The caps are applied in one
place, :func:`cap_messages`; when the newest message alone is over the token cap, its end is kept.

**Reading.** Only the tail of a transcript is read, backwards from its end
(:func:`sidelight.recent_entries`), in growing steps until the caps are met: a long transcript costs
what its last messages cost. A Pi session is a tree (``/tree`` and forks branch it in place): only its
active branch is read, the path from its last entry back to the root, as Pi itself sends it.

**Session keys.** A host names its sessions by key, a tuple like ``("discord", channel_id)``: the key's
string is its parts joined by ``:`` (``discord:1234``), and it names the sessions whose resolver key or
name is that string (a session a host names ``discord:1234``, or an agent's ``<agent>:<id>`` key). A
key's transcripts are its session's current one, the earlier ones sidelight saw it have (``<state
dir>/history-keys.json``, written whenever :func:`history` or a session-start hook sees a host-named
session with a transcript new to it), and the earlier ones its resolver keeps for it
(``ResolverSpec.history_paths``). After a restart, when the key's new
transcript is empty or not written yet, the history is seeded from the newest earlier ones.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from sidelight._fast.logs import get_logger
from sidelight.statelayout import HISTORY_KEYS_FILE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import Session
    from sidelight.types import Entry

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOKENS",
    "INJECTED_HEADERS",
    "HistoryTarget",
    "Message",
    "SessionKey",
    "Transcript",
    "cap_messages",
    "history",
    "key_string",
    "messages_from_entries",
    "note_session",
    "strip_injected",
    "subagent_context",
    "transcripts_of",
]

logger = get_logger(__name__)


DEFAULT_MAX_MESSAGES: Final = 20
DEFAULT_MAX_TOKENS: Final = 8192
#: Tokens a message costs beyond its content (its role and framing in a model request).
MESSAGE_OVERHEAD: Final = 4
#: How many characters of one transcript entry are read (a longer text is cut and ends with ``…``).
TEXT_LIMIT: Final = 32_000
#: How many tool lines of one uninterrupted run of tool uses are kept (the last ones).
TOOL_RUN_KEPT: Final = 6
#: The most transcript entries read from one transcript for one history.
MAX_ENTRIES: Final = 20_000
#: The most transcripts of one session key read for one history (the newest).
MAX_TRANSCRIPTS: Final = 8
#: How many session keys, and transcripts per key, the state directory's
#: :data:`~sidelight.statelayout.HISTORY_KEYS_FILE` keeps (the most recently seen).
KEYS_KEPT: Final = 1000
TRANSCRIPTS_PER_KEY: Final = 32
#: Tool uses a person runs, not the agent (Pi's ``!command``): they are ``user`` messages of their own.
USER_TOOLS: Final = frozenset({"bashexecution"})
#: The one-line sub-agent context is at most this many characters.
SUBAGENT_LIMIT: Final = 400

#: How the blocks sidelight injects begin: the digest, the session context, the welcome back, the
#: long-term context, the handoff and the news within the turn (appended to a tool's result by the
#: hosts that keep it there). A paragraph of a message that begins so is cut out.
INJECTED_HEADERS: Final[tuple[str, ...]] = (
    "[Session Activity]",
    "[SESSION CONTEXT]",
    "Welcome back. Session ",
    "[Long-term context]",
    "[Handoff]",
    "# Recap of the previous session",
    "# Recap of session ",
    "[sidelight] while you worked",
)

#: A host's name for a session: ``("discord", channel_id)``.
SessionKey: TypeAlias = tuple[str, ...]
#: What :func:`history` reads: a session, a host's key, or a session name, key, id, id prefix or path.
HistoryTarget: TypeAlias = "Session | SessionKey | str | os.PathLike[str]"


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation: who said it, what, and when (ISO 8601 as in the transcript)."""

    role: Literal["user", "assistant"]
    content: str
    timestamp: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """``{"role", "content", "timestamp"}``: ready for JSON, and for most chat APIs' message lists."""
        return {"role": self.role, "content": self.content, "timestamp": self.timestamp}


@dataclass(frozen=True, slots=True)
class Transcript:
    """One transcript to read history from, with the native decoder that reads it (``auto``: detect)."""

    path: Path
    decoder: str = "auto"


# -- the public entry point ------------------------------------------------------------------------------


def history(
    session: HistoryTarget,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
) -> list[Message]:
    """The recent conversation of ``session``, oldest first: at most ``max_messages`` messages and
    ``max_tokens`` tokens, the newest kept (see the module docs for what a message holds).

    ``session`` is a :class:`~sidelight.records.Session`, a host's key (a tuple such as
    ``("discord", "1234")``), or a string as ``sidelight read`` takes it (a session name, key or id, an
    id prefix, a transcript path) or a remembered key's string. A host-named session's earlier
    transcripts seed the history when its newest one has too little.

    Raises :class:`~sidelight.engine.discovery.SessionNotFoundError` /
    :class:`~sidelight.engine.discovery.AmbiguousSessionError`
    (both :class:`LookupError`) when ``session`` names no session or several, :class:`ValueError` for a
    negative cap, and what :func:`sidelight.scan` raises for a transcript it cannot read.
    """
    from sidelight.config import Settings
    from sidelight.plugins import get_plugins
    from sidelight.tokens import get_counter

    _check_caps(max_messages, max_tokens)
    if max_messages == 0 or max_tokens == 0:
        return []
    settings = settings or Settings.load()
    plugins = plugins or get_plugins()
    transcripts = transcripts_of(session, settings, plugins)
    count = _memo(get_counter(plugins, settings=settings))
    return _collect(transcripts, max_messages, max_tokens, count, injected_markers(plugins))


def _check_caps(max_messages: int, max_tokens: int) -> None:
    for name, value in (("max_messages", max_messages), ("max_tokens", max_tokens)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer, not {value!r}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")


#: Token counts remembered across calls, by counter and text: a host asks for the same channel's
#: history on every request, and counting is most of what a history costs. At most this many.
COUNT_CACHE_SIZE: Final = 16_384
_counts: dict[tuple[Callable[[str], int], int, int], int] = {}


def _memo(count: Callable[[str], int]) -> Callable[[str], int]:
    """``count`` remembering its answers (in this call, and in :data:`_counts` across calls), and soft
    on a broken counter: one that raises or answers a negative number is replaced, with a warning, by
    a quarter of the length in characters, so that a budget is never left uncounted."""
    known: dict[str, int] = {}
    broken: list[bool] = []

    def counted(text: str) -> int:
        value = known.get(text)
        if value is not None:
            return value
        key = (count, len(text), hash(text))
        value = _counts.get(key)
        if value is None:
            value = (len(text) + 3) // 4
            if not broken:
                try:
                    answer = count(text)
                    if isinstance(answer, bool) or not isinstance(answer, int) or answer < 0:
                        raise ValueError(f"the token counter answered {answer!r}")
                    value = answer
                    _remember_count(key, value)
                except Exception:
                    logger.warning("the token counter failed; 4 characters a token", exc_info=True)
                    broken.append(True)
        known[text] = value
        return value

    return counted


def _remember_count(key: tuple[Callable[[str], int], int, int], value: int) -> None:
    if len(_counts) >= COUNT_CACHE_SIZE:
        # The oldest goes; another thread may have taken it first.
        with contextlib.suppress(KeyError, RuntimeError, StopIteration):
            del _counts[next(iter(_counts))]
    _counts[key] = value


# -- the cap (the one place) ----------------------------------------------------------------------------


def cap_messages(
    messages: Sequence[Message],
    max_messages: int = DEFAULT_MAX_MESSAGES,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    count: Callable[[str], int] | None = None,
) -> list[Message]:
    """The newest of ``messages`` (oldest first) that fit both caps, oldest first.

    Walking from the newest, a message is kept while fewer than ``max_messages`` are kept and its tokens
    (``count(content)`` plus :data:`MESSAGE_OVERHEAD`) fit in what is left of ``max_tokens``; the first
    that does not fit ends the walk, so the result is always a contiguous, newest run. When the newest
    message alone is over ``max_tokens``, its end is kept (cut at a line or word, after ``… ``).
    ``count`` defaults to the built-in estimate.

    >>> msgs = [Message("user", "one"), Message("assistant", "two"), Message("user", "three")]
    >>> [m.content for m in cap_messages(msgs, max_messages=2)]
    ['two', 'three']
    """
    if count is None:
        from sidelight.tokens import estimate_tokens

        count = estimate_tokens
    kept: list[Message] = []
    used = 0
    for message in reversed(messages):
        if len(kept) >= max_messages:
            break
        cost = count(message.content) + MESSAGE_OVERHEAD
        if used + cost > max_tokens:
            if not kept:
                end = _fit_end(message.content, max_tokens - MESSAGE_OVERHEAD, count)
                if end:
                    kept.append(Message(message.role, end, message.timestamp))
            break
        kept.append(message)
        used += cost
    kept.reverse()
    return kept


_CUT: Final = "… "


def _fit_end(text: str, budget: int, count: Callable[[str], int]) -> str | None:
    """The longest end of ``text``, after ``… ``, that costs at most ``budget`` tokens (``None``: none)."""
    if budget <= count(_CUT + text[-1:]):
        return None
    low, high = 1, len(text) - 1  # the start of the end kept: high always fits, low never does
    if count(_CUT + text[high:]) > budget:
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if count(_CUT + text[middle:]) <= budget:
            high = middle
        else:
            low = middle
    # Start at a line or word, when there is one near.
    window = text[high : high + 200]
    for separator in ("\n", " "):
        at = window.find(separator)
        if 0 <= at < len(window) - 1:
            return _CUT + text[high + at + 1 :]
    return _CUT + text[high:]


# -- reading transcripts --------------------------------------------------------------------------------


def _collect(
    transcripts: Sequence[Transcript],
    max_messages: int,
    max_tokens: int,
    count: Callable[[str], int],
    markers: Sequence[str],
) -> list[Message]:
    """The capped messages of ``transcripts`` (newest first): the newest transcript's last messages,
    then, while the caps are not met, the ones before them in the next older transcript."""
    gathered: list[Message] = []
    for transcript in transcripts[:MAX_TRANSCRIPTS]:
        older, full = _read(transcript, max_messages, max_tokens, count, markers, gathered)
        gathered = older + gathered
        if full:
            break
    return cap_messages(gathered, max_messages, max_tokens, count)


def _read(
    transcript: Transcript,
    max_messages: int,
    max_tokens: int,
    count: Callable[[str], int],
    markers: Sequence[str],
    newer: Sequence[Message],
) -> tuple[list[Message], bool]:
    """The messages of one transcript's tail, enough to fill the caps on top of ``newer`` (read in
    growing steps), and whether the caps are met (no older transcript is needed)."""
    from sidelight.engine.scanning import recent_entries

    want = max_messages - len(newer)
    if want <= 0:
        return [], True
    limit = min(MAX_ENTRIES, max(64, want * 8))
    while True:
        entries = recent_entries(transcript.path, transcript.decoder, limit, text_limit=TEXT_LIMIT)
        messages = messages_from_entries(entries, markers)
        whole = len(entries) < limit
        if not whole and len(messages) > 1:
            # The window may begin inside an agent's turn: that first message may be partial.
            messages = messages[1:]
        full = _fills(messages, newer, max_messages, max_tokens, count)
        if whole or full or limit >= MAX_ENTRIES:
            return messages, full or (not whole)
        limit = min(MAX_ENTRIES, limit * 4)


def _fills(
    messages: Sequence[Message],
    newer: Sequence[Message],
    max_messages: int,
    max_tokens: int,
    count: Callable[[str], int],
) -> bool:
    """Whether ``messages`` followed by ``newer`` meet a cap (so reading further back changes nothing)."""
    combined = [*messages, *newer]
    return len(cap_messages(combined, max_messages, max_tokens, count)) < len(combined)


def messages_from_entries(entries: Iterable[Entry], markers: Sequence[str] = ()) -> list[Message]:
    """Transcript entries (:func:`sidelight.recent_entries`) as messages: each prompt one ``user``
    message; the agent's text and tool lines up to the next prompt one ``assistant`` message. Our own
    injected blocks (and text starting with one of ``markers``) are cut out; empty messages dropped."""
    out: list[Message] = []
    parts: list[str] = []
    tools: list[str] = []
    stamp: str | None = None

    def end_tools() -> None:
        if len(tools) > TOOL_RUN_KEPT:
            parts.append(f"[+{len(tools) - TOOL_RUN_KEPT + 1} more tool uses]")
            parts.extend(tools[-(TOOL_RUN_KEPT - 1) :])
        else:
            parts.extend(tools)
        tools.clear()

    def end_reply() -> None:
        nonlocal stamp
        end_tools()
        if parts:
            out.append(Message("assistant", "\n".join(parts), stamp))
        parts.clear()
        stamp = None

    from sidelight.features.reader import tool_line

    for entry in entries:
        if entry.role == "tool":
            # The result's text never reaches the message: only its one short line does.
            result = None if entry.result is None else strip_injected(entry.result, markers)
            line = tool_line(entry.tool_name, entry.primary_arg, result, error=entry.result_error)
            if (entry.tool_name or "").lower() in USER_TOOLS:
                end_reply()
                out.append(Message("user", line, entry.timestamp))
                continue
            tools.append(line)
            stamp = stamp or entry.timestamp
            continue
        text = clean_text(entry.text or "", markers)
        if not text:
            continue
        if entry.role == "user":
            end_reply()
            out.append(Message("user", text, entry.timestamp))
        else:
            end_tools()
            parts.append(text)
            stamp = stamp or entry.timestamp
    end_reply()
    return out


def clean_text(text: str, markers: Sequence[str] = ()) -> str:
    """A message's text made safe to send: our injected blocks cut out, terminal escapes and
    invisible characters removed, secrets redacted, frame markers and role tags defanged
    (:func:`sidelight.redact.defang`), blank ends trimmed (indentation kept). A text the
    native core cut at :data:`TEXT_LIMIT` ends with ``…``. Texts up to :data:`CLEAN_CACHED_LENGTH`
    characters are remembered: a host reads the same messages on every request."""
    if len(text) <= CLEAN_CACHED_LENGTH:
        return _clean_cached(text, tuple(markers))
    return _clean(text, markers)


#: Texts up to this long are remembered by :func:`clean_text` (at most 4,096 of them).
CLEAN_CACHED_LENGTH: Final = 4096


@functools.lru_cache(maxsize=4096)
def _clean_cached(text: str, markers: tuple[str, ...]) -> str:
    return _clean(text, markers)


def _clean(text: str, markers: Sequence[str]) -> str:
    from sidelight.redact import defang, redact, strip_invisible

    cut = len(text) >= TEXT_LIMIT
    # Sent to a model: the same neutralising rule as every other output (frame markers, role tags and
    # their look-alikes defanged), or a quoted ``</system-reminder>`` would end the host's wrapper.
    text = defang(redact(strip_invisible(strip_injected(text, markers)))).strip("\n").rstrip()
    if not text.strip():
        return ""
    return text + " …" if cut else text


# Our blocks as a model might quote them: behind a quote mark, a list bullet or emphasis.
_QUOTE_LEAD: Final = re.compile(r"^(?:\s|>|\*|_|`)*")
_PARAGRAPHS: Final = re.compile(r"\n[ \t]*\n")
_CONTEXT_BLOCK: Final = re.compile(r"\[SESSION CONTEXT\][\s\S]*?(?:\[END SESSION\]|\Z)")
_DIGEST_LINE: Final = re.compile(r"^\s*-\s.*\((?:just now|\d+[mhd] ago), \d+ messages?\)", re.M)


def strip_injected(text: str, markers: Sequence[str] = ()) -> str:
    """``text`` without the blocks sidelight injects (see :data:`INJECTED_HEADERS`) and without
    paragraphs that begin with one of ``markers``: a host that puts a digest into its prompt, or a model
    that quotes one, does not get it back as conversation. Paragraphs are separated by blank lines.

    >>> strip_injected("[Session Activity] (a report)\\n- main (2m ago, 3 messages): ...\\n\\nFix the bug")
    'Fix the bug'
    """
    headers = (*INJECTED_HEADERS, *markers)
    if not any(header in text for header in headers) and _DIGEST_LINE.search(text) is None:
        return text
    text = _CONTEXT_BLOCK.sub("", text)
    kept = []
    for paragraph in _PARAGRAPHS.split(text):
        lead = _QUOTE_LEAD.sub("", paragraph, count=1)
        if lead.startswith(headers):
            continue
        lines = [line for line in paragraph.splitlines() if line.strip()]
        if lines and all(_DIGEST_LINE.match(line) for line in lines):
            continue  # the lines of a digest, without their header
        kept.append(paragraph)
    return "\n\n".join(kept)


def injected_markers(plugins: Plugins) -> tuple[str, ...]:
    """Every format plugin's ``injected_markers`` (the built-in headers are always cut)."""
    found: dict[str, None] = {}
    try:
        for spec in plugins.formats().values():
            found.update(dict.fromkeys(m for m in spec.injected_markers if m))
    except Exception:  # a broken format plugin costs its markers, not the history
        logger.warning("cannot list the formats' injected markers", exc_info=True)
    return tuple(found)


# -- session keys -----------------------------------------------------------------------------------------


def key_string(key: SessionKey | str) -> str:
    """A host's session key as the string sessions are named by: its parts joined by ``:``.

    >>> key_string(("discord", "1234"))
    'discord:1234'
    """
    if isinstance(key, str):
        text = key.strip()
        if not text:
            raise ValueError("a session key needs at least one non-empty part")
        return text
    if not isinstance(key, tuple) or not key:
        raise ValueError(f"a session key is a non-empty tuple of strings, not {key!r}")
    parts = []
    for part in key:
        if isinstance(part, bool) or not isinstance(part, str | int):
            raise TypeError(f"a session key's parts are strings, not {part!r}")
        text = str(part).strip()
        if not text:
            raise ValueError(f"a session key's parts must not be empty: {key!r}")
        parts.append(text)
    return ":".join(parts)


def transcripts_of(target: HistoryTarget, settings: Settings, plugins: Plugins) -> list[Transcript]:
    """The transcripts :func:`history` reads for ``target``, newest first (see :func:`history`)."""
    from sidelight.engine.discovery import SessionNotFoundError, resolve_session
    from sidelight.records import Session

    if isinstance(target, Session):
        return _transcripts([target], [], settings, plugins)
    if isinstance(target, tuple):
        wanted = key_string(target)
        sessions, remembered = _key_sessions(wanted, settings, plugins)
        if not sessions and not remembered:
            raise SessionNotFoundError(
                f"no session has the key {wanted!r}: no resolver lists one named so and none was seen "
                "before; run 'sidelight sessions' to list them"
            )
        return _transcripts(sessions, remembered, settings, plugins)
    spec = os.fspath(target)
    try:
        session = resolve_session(spec, settings, plugins)
    except SessionNotFoundError:
        # A host-named session whose transcript is gone or not written yet, seen before.
        sessions, remembered = _key_sessions(spec.strip(), settings, plugins)
        if not sessions and not remembered:
            raise
        return _transcripts(sessions, remembered, settings, plugins)
    if session.resolver == "path":
        return [Transcript(session.path, session.format)]
    return _transcripts([session], [], settings, plugins)


def _key_sessions(
    wanted: str, settings: Settings, plugins: Plugins
) -> tuple[list[Session], list[dict[str, Any]]]:
    """The listed sessions named by key string ``wanted`` (by resolver key or name), and the records of
    remembered sessions so named. Raises :class:`AmbiguousSessionError` when they lie in more than one
    group (two minds that both have a ``discord`` session)."""
    from sidelight.engine.discovery import AmbiguousSessionError, list_sessions

    sessions = [s for s in list_sessions(settings, plugins) if wanted in (s.key, s.name)]
    records = [
        {"key": key, **record}
        for key, record in _load_keys(settings).items()
        if wanted in (key, record.get("name"))
    ]
    groups = {s.group for s in sessions} | {str(r.get("group")) for r in records if r.get("group")}
    if len(groups) > 1:
        shown = ", ".join(sorted({s.key for s in sessions} | {str(r["key"]) for r in records}))
        raise AmbiguousSessionError(
            f"{wanted!r} names sessions of {len(groups)} groups: {shown}; pass one of these keys"
        )
    return sessions, records


def _transcripts(
    sessions: Sequence[Session], remembered: Sequence[dict[str, Any]], settings: Settings, plugins: Plugins
) -> list[Transcript]:
    from sidelight.engine.reads import decoder_for

    formats = plugins.formats()
    found: dict[str, tuple[float, Transcript]] = {}

    from pathlib import Path

    def add(path: Path, decoder: str) -> None:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return  # not written yet, or gone
        found.setdefault(str(path), (mtime, Transcript(path, decoder)))

    records = list(remembered)
    keys = {str(r["key"]) for r in records}
    index = _load_keys(settings) if sessions else {}
    for session in sessions:
        decoder = decoder_for(session, plugins)
        add(session.path, decoder)
        resolver = plugins.resolver(session.resolver)
        if resolver is not None and resolver.history_paths is not None:
            # Earlier transcripts its resolver keeps for it (``ResolverSpec.history_paths``).
            for earlier in resolver.history_paths(session):
                add(earlier, decoder)
        note_session(session, settings, known=index.get(session.key))
        record = index.get(session.key)
        if session.key not in keys and record is not None:
            records.append({"key": session.key, **record})
    for record in records:
        fmt = str(record.get("format") or "auto")
        decoder = formats[fmt].decoder if fmt in formats else fmt
        for remembered_path in _record_paths(record):
            add(Path(remembered_path), decoder)
    ordered = sorted(found.values(), key=lambda item: item[0], reverse=True)
    return [transcript for _, transcript in ordered]


def _record_paths(record: dict[str, Any]) -> list[str]:
    transcripts = record.get("transcripts")
    return [p for p in transcripts if isinstance(p, str)] if isinstance(transcripts, dict) else []


def _keys_file(settings: Settings) -> Any:
    from sidelight.statefile import shared_json

    return shared_json(settings.state_dir / HISTORY_KEYS_FILE)


def _load_keys(settings: Settings) -> dict[str, dict[str, Any]]:
    try:
        keys = _keys_file(settings).read().get("keys")
    except OSError:
        logger.warning("cannot read %s", settings.state_dir / HISTORY_KEYS_FILE, exc_info=True)
        return {}
    if not isinstance(keys, dict):
        return {}
    return {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, dict)}


def note_session(
    session: Session,
    settings: Settings,
    now: float | None = None,
    *,
    known: dict[str, Any] | None = None,
) -> None:
    """Remembers that the host-named ``session`` (one of a resolver that is not a plain agent template:
    volute, a plugin's) has its transcript at ``session.path``, so that its key's history survives the
    host's next session. Writes only when the transcript is new to the key. Never raises."""
    from sidelight.engine.discovery import is_generic
    from sidelight.plugins import get_plugins

    if session.resolver == "path" or is_generic(session.resolver, get_plugins()):
        return
    path = str(session.path)
    try:
        if known is None:
            known = _load_keys(settings).get(session.key)
        if known is not None and path in _record_paths(known):
            return
        moment = time.time() if now is None else now

        def change(state: dict[str, Any]) -> dict[str, Any]:
            keys = state.get("keys")
            keys = dict(keys) if isinstance(keys, dict) else {}
            record = keys.get(session.key)
            record = dict(record) if isinstance(record, dict) else {}
            transcripts = record.get("transcripts")
            transcripts = dict(transcripts) if isinstance(transcripts, dict) else {}
            transcripts[path] = moment
            newest = sorted(transcripts.items(), key=lambda item: item[1], reverse=True)
            record.update(
                name=session.name,
                group=session.group,
                format=session.format,
                seen=moment,
                transcripts=dict(newest[:TRANSCRIPTS_PER_KEY]),
            )
            keys[session.key] = record
            if len(keys) > KEYS_KEPT:
                by_seen = sorted(keys.items(), key=lambda item: _seen(item[1]), reverse=True)
                keys = dict(by_seen[:KEYS_KEPT])
            return {"version": 1, "keys": keys}

        _keys_file(settings).update(change)
    except Exception:  # the history still works from the resolvers' answers
        logger.warning("cannot remember the transcript of %s", session.key, exc_info=True)


def _seen(record: Any) -> float:
    value = record.get("seen") if isinstance(record, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


# -- sub-agent context --------------------------------------------------------------------------------------


def subagent_context(
    session: HistoryTarget,
    *,
    limit: int = SUBAGENT_LIMIT,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
) -> str | None:
    """One line for an agent that is handed a task by ``session``'s agent (a subagent, a delegate):
    ``Context from main conversation: the user asked "…"; done so far: Edit app.py, Bash pytest; last
    reply: "…"``. It holds the main session's last user request and what its agent did since (its last
    tool uses and the last line of its text), from the tail of its newest transcript, sanitized, at most
    ``limit`` characters. ``None`` when the session has no user request yet. Raises what :func:`history`
    raises."""
    from sidelight.config import Settings
    from sidelight.engine.scanning import recent_entries
    from sidelight.features.reader import tool_line
    from sidelight.plugins import get_plugins
    from sidelight.redact import sanitize

    settings = settings or Settings.load()
    plugins = plugins or get_plugins()
    transcripts = transcripts_of(session, settings, plugins)
    if not transcripts:
        return None
    markers = injected_markers(plugins)
    entries = recent_entries(transcripts[0].path, transcripts[0].decoder, 200, text_limit=4000)
    request: str | None = None
    tools: list[str] = []
    reply: str | None = None
    for entry in entries:
        if entry.role == "tool":
            tools.append(tool_line(entry.tool_name, entry.primary_arg)[1:-1])
            continue
        text = clean_text(entry.text or "", markers)
        if not text:
            continue
        if entry.role == "user":
            request, tools, reply = text, [], None
        else:
            reply = next(line for line in reversed(text.splitlines()) if line.strip())
    if request is None:
        return None
    parts = [f'Context from main conversation: the user asked "{sanitize(request, 200)}"']
    if tools:
        parts.append("done so far: " + ", ".join(sanitize(t, 60) for t in tools[-4:]))
    if reply:
        parts.append(f'last reply: "{sanitize(reply, 160)}"')
    return sanitize("; ".join(parts), limit)
