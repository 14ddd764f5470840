"""Long-term facts: what a person or an agent asked to be remembered across sessions.

``sidelight remember "prefers short answers"`` stores a fact; every new session is told the facts in a
``[Long-term context]`` block at its start (Claude Code and Codex at ``SessionStart``; Pi and the Agent SDK,
which cannot inject at start, with their first prompt), and the recap takes them as its existing
memories (:func:`load_fact_texts`). A fact has a *scope*: ``user`` (about the person: preferences,
names, habits) or ``agent`` (what the agent learned: where things are, how the project works).

Facts are deduplicated by their normalised text (Unicode NFKC, case-folded, whitespace collapsed,
surrounding quotes and final punctuation dropped): adding a fact again *confirms* it (its confirmation
time and count go up, and its scope becomes the new one) instead of storing a copy. Its id is a hash
of that normalised text, so the same fact has the same id on every machine and in every process.

The store is ``<state dir>/facts.json``: one JSON document written as the cursor store writes (an
exclusive ``flock`` on ``facts.json.lock`` around a read-modify-write, a temporary file, ``fsync``,
``os.replace``), so any number of processes may add and forget at once without losing a fact. Files
are ``0600`` in ``0700`` directories; a corrupt file is moved aside and the store starts afresh. Text is
stored with secrets redacted and control characters removed (a secret never reaches the file).
"""

from __future__ import annotations

import time
import unicodedata

from sidelight._fast._record import record
from sidelight._fast.logs import get_logger
from sidelight.errors import SidelightError
from sidelight.statefile import private_dir, shared_json
from sidelight.statelayout import FACTS_FILE, GIVEN_DIR, session_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from typing import Any, Final, Literal, TypeAlias

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, Session

__all__ = [
    "HEADER",
    "SCOPES",
    "Fact",
    "FactNotFoundError",
    "FactStore",
    "Scope",
    "add_fact",
    "fact_id",
    "forget_fact",
    "injects_at_start",
    "list_facts",
    "load_fact_texts",
    "long_term_context",
    "normalize_fact",
    "plan_long_term",
    "with_long_term",
]

logger = get_logger(__name__)

#: Who a fact is about: the person, or what the agent learned.
if TYPE_CHECKING:
    Scope: TypeAlias = Literal["user", "agent"]
else:
    Scope = str  # the Literal above, without importing typing at run time
SCOPES: Final[tuple[Scope, ...]] = ("user", "agent")

#: A fact is at most this many characters (after cleaning).
FACT_LIMIT: Final = 500
#: What the injected block starts with (text that starts with it is never reported back as conversation).
HEADER: Final = "[Long-term context]"
#: The note after the header: background, not instructions.
NOTE: Final = "(remembered across sessions; background, not instructions)"
#: The injected block is at most this many characters.
CONTEXT_LIMIT: Final = 800
#: One fact's line in the block is at most this many characters.
LINE_LIMIT: Final = 200
#: How the scopes are headed in the block, in this order.
_SCOPE_TITLES: Final = {"user": "About the user:", "agent": "Learned by the agent:"}
_STORE_VERSION: Final = 1


class FactNotFoundError(SidelightError, LookupError):
    """No stored fact has the id or the text that was asked for."""


@record(frozen=True)
class Fact:
    """One remembered fact. Times are epoch seconds. (A frozen dataclass to its users, written out:
    :mod:`sidelight._fast._record`.)"""

    __slots__ = ("confirmations", "confirmed", "created", "id", "scope", "text")

    #: A hash of the normalised text (:func:`fact_id`): the same fact has the same id everywhere.
    id: str
    text: str
    scope: Scope
    #: When it was first remembered, and when it was last added again (confirmed).
    created: float
    confirmed: float
    #: How many times it was added (1: never confirmed again).
    confirmations: int

    def __init__(
        self, id: str, text: str, scope: Scope, created: float, confirmed: float, confirmations: int = 1
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "created", created)
        object.__setattr__(self, "confirmed", confirmed)
        object.__setattr__(self, "confirmations", confirmations)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the times as ISO 8601 UTC (what ``sidelight facts --json`` prints)."""
        return {
            "id": self.id,
            "text": self.text,
            "scope": self.scope,
            "created": _iso(self.created),
            "confirmed": _iso(self.confirmed),
            "confirmations": self.confirmations,
        }


def normalize_fact(text: str) -> str:
    """The text facts are deduplicated by: NFKC, case-folded, one space between words, without
    surrounding quotes or final punctuation.

    >>> normalize_fact('  "Prefers  TABS."  ') == normalize_fact("prefers tabs")
    True
    """
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    previous = None
    while text != previous:
        previous = text
        text = text.strip(" \"'`“”‘’").rstrip(".!;,。").strip()
    return text


def fact_id(text: str) -> str:
    """The id of the fact with this text: ten hex digits of the SHA-256 of its normalised text."""
    import hashlib  # not with the module: hooks import it on every prompt, and hashlib is slow to load

    return hashlib.sha256(normalize_fact(text).encode()).hexdigest()[:10]


def clean_fact(text: str) -> str:
    """A fact's text as stored: one line, control and invisible characters removed, secrets redacted.

    Raises :class:`ValueError` when nothing is left or it is longer than :data:`FACT_LIMIT`.
    """
    from sidelight.redact import redact, strip_invisible

    if not isinstance(text, str):
        raise TypeError(f"a fact is a string, not {type(text).__name__}")
    cleaned = " ".join(redact(strip_invisible(text)).split())
    if not normalize_fact(cleaned):
        raise ValueError("a fact needs some text")
    if len(cleaned) > FACT_LIMIT:
        raise ValueError(f"a fact is at most {FACT_LIMIT} characters, this one has {len(cleaned)}")
    return cleaned


# -- the state file ------------------------------------------------------------------------------------


# -- the store -----------------------------------------------------------------------------------------


class FactStore:
    """The facts in one file (default: ``<state dir>/facts.json``); safe for many processes at once."""

    __slots__ = ("file",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.file = shared_json(path)

    @classmethod
    def for_settings(cls, settings: Settings) -> FactStore:
        return cls(settings.state_dir / FACTS_FILE)

    @property
    def path(self) -> Path:
        return self.file.path

    def add(self, text: str, scope: str = "user", now: float | None = None) -> tuple[Fact, bool]:
        """Remembers ``text``; returns the fact and whether it is new (``False``: an existing fact with
        the same normalised text was confirmed). Raises :class:`ValueError` for an unknown scope, an
        empty or too long text."""
        checked = _scope(scope)
        cleaned = clean_fact(text)
        key = fact_id(cleaned)
        moment = time.time() if now is None else now
        created: list[bool] = []

        def change(state: dict[str, Any]) -> dict[str, Any]:
            facts = _facts_of(state)
            old = facts.get(key)
            if old is None:
                facts[key] = {
                    "text": cleaned,
                    "scope": checked,
                    "created": moment,
                    "confirmed": moment,
                    "confirmations": 1,
                }
                created.append(True)
            else:
                # The newest wording and scope win; the first time it was said is kept.
                old.update(
                    text=cleaned,
                    scope=checked,
                    confirmed=max(moment, _number(old.get("confirmed"))),
                    confirmations=int(_number(old.get("confirmations"), 1)) + 1,
                )
            return {"version": _STORE_VERSION, "facts": facts}

        state = self.file.update(change)
        fact = _fact(key, _facts_of(state)[key])
        assert fact is not None  # written just now, from checked values
        return fact, bool(created)

    def list(self, scope: str | None = None) -> list[Fact]:
        """The facts, oldest first (ties by id): a deterministic order."""
        wanted = None if scope is None else _scope(scope)
        facts = [_fact(key, value) for key, value in _facts_of(self.file.read()).items()]
        kept = [f for f in facts if f is not None and (wanted is None or f.scope == wanted)]
        return sorted(kept, key=lambda f: (f.created, f.id))

    def forget(self, spec: str) -> Fact:
        """Removes the fact whose id is ``spec`` (or an unambiguous id prefix of at least four
        characters) or whose normalised text is ``spec``'s. Raises :class:`FactNotFoundError`."""
        spec = spec.strip()
        removed: list[Fact] = []
        problem: list[str] = []

        def change(state: dict[str, Any]) -> dict[str, Any] | None:
            facts = _facts_of(state)
            key = _find(facts, spec, problem)
            if key is None:
                return None
            fact = _fact(key, facts.pop(key))
            if fact is not None:
                removed.append(fact)
            return {"version": _STORE_VERSION, "facts": facts}

        if not spec:
            raise FactNotFoundError("no fact given; pass its id (see 'sidelight facts') or its text")
        self.file.update(change)
        if not removed:
            raise FactNotFoundError(problem[0] if problem else f"no fact matches {spec!r}")
        return removed[0]


def _find(facts: dict[str, dict[str, Any]], spec: str, problem: list[str]) -> str | None:
    if spec in facts:
        return spec
    lowered = spec.lower()
    if len(lowered) >= 4 and all(c in "0123456789abcdef" for c in lowered):
        matches = [key for key in facts if key.startswith(lowered)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            problem.append(f"{spec!r} is the start of {len(matches)} fact ids; give more of it")
            return None
    by_text = fact_id(spec) if normalize_fact(spec) else None
    if by_text is not None and by_text in facts:
        return by_text
    problem.append(f"no fact has the id or the text {spec!r}; run 'sidelight facts' to list them")
    return None


def _scope(scope: str) -> Scope:
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; use {' or '.join(SCOPES)}")
    return scope


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _facts_of(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    facts = state.get("facts")
    if not isinstance(facts, dict):
        return {}
    return {k: v for k, v in facts.items() if isinstance(k, str) and isinstance(v, dict)}


def _fact(key: str, data: dict[str, Any]) -> Fact | None:
    """The stored record as a :class:`Fact` (``None``: not one we wrote; left in the file, not shown)."""
    text, scope = data.get("text"), data.get("scope")
    if not isinstance(text, str) or not text or scope not in SCOPES:
        return None
    created = _number(data.get("created"))
    return Fact(
        id=key,
        text=text,
        scope=scope,
        created=created,
        confirmed=max(created, _number(data.get("confirmed"), created)),
        confirmations=max(1, int(_number(data.get("confirmations"), 1))),
    )


def _iso(moment: float) -> str:
    from datetime import UTC, datetime  # here: a prompt's facts never need it

    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the module-level API ------------------------------------------------------------------------------


def _store(settings: Settings | None) -> FactStore:
    from sidelight.config import Settings

    return FactStore.for_settings(settings or Settings.load())


def add_fact(
    text: str, scope: str = "user", *, settings: Settings | None = None, now: float | None = None
) -> Fact:
    """Remembers ``text`` (``scope``: ``user`` or ``agent``), or confirms it when an equal fact (same
    normalised text) is stored; returns the stored fact. Raises :class:`ValueError` for an empty or
    too long text or an unknown scope, :class:`OSError` when the store cannot be written."""
    return _store(settings).add(text, scope, now)[0]


def list_facts(scope: str | None = None, *, settings: Settings | None = None) -> list[Fact]:
    """Every stored fact (of ``scope``, when given), oldest first."""
    return _store(settings).list(scope)


def forget_fact(spec: str, *, settings: Settings | None = None) -> Fact:
    """Removes the fact with this id (or id prefix) or this text; returns it. Raises
    :class:`FactNotFoundError` (a :class:`LookupError`) when there is none."""
    return _store(settings).forget(spec)


def load_fact_texts(settings: Settings) -> list[str]:
    """Every stored fact's text, oldest first (ties by id): the recap's existing memories. Never
    raises for a missing or corrupt store (``[]``)."""
    try:
        return [fact.text for fact in FactStore.for_settings(settings).list()]
    except OSError:
        logger.warning("cannot read the facts in %s", settings.state_dir / FACTS_FILE, exc_info=True)
        return []


def long_term_context(
    facts: Iterable[Fact] | None = None, *, settings: Settings | None = None, limit: int = CONTEXT_LIMIT
) -> str | None:
    """The ``[Long-term context]`` block: the facts by scope, the most recently confirmed first, each
    line sanitized and cut, at most ``limit`` characters (facts that do not fit are left out).
    ``None`` when there are no facts.

    >>> print(long_term_context([Fact("1", "Prefers short answers", "user", 0.0, 0.0)]))
    [Long-term context] (remembered across sessions; background, not instructions)
    About the user:
    - Prefers short answers
    """
    from sidelight.redact import sanitize

    if facts is None:
        facts = _store(settings).list()
    ordered = sorted(facts, key=lambda f: (-f.confirmed, f.id))
    if not ordered:
        return None
    lines = [f"{HEADER} {NOTE}"]
    used = len(lines[0])
    shown = 0
    for scope in SCOPES:
        title = _SCOPE_TITLES[scope]
        titled = False
        for fact in ordered:
            if fact.scope != scope:
                continue
            line = "- " + sanitize(fact.text, LINE_LIMIT - 2)
            cost = len(line) + 1 + (0 if titled else len(title) + 1)
            if used + cost > limit:
                break
            if not titled:
                lines.append(title)
                titled = True
            lines.append(line)
            used += cost
            shown += 1
    return "\n".join(lines) if shown else None


# -- injection at a session's start ---------------------------------------------------------------------


def injects_at_start(host: str, plugins: Plugins) -> bool:
    """Whether a hook's answer at a session's start from ``host`` reaches the model: its agent's
    ``start`` hook can ``inject`` (:class:`sidelight.records.AgentSpec`). An extension or plugin that
    hears the start but cannot add to the conversation gets the block (and a handoff) with its first
    prompt instead. A host of no agent, or whose agent says nothing of its start, is taken to inject."""
    agent = plugins.agent_of_host(host)
    return agent is None or agent.hook("start") is None or agent.can("start", "inject")


def with_long_term(
    event: HostEvent, settings: Settings, plugins: Plugins | None, text: str | None
) -> str | None:
    """``text`` (what a hook injects) with the ``[Long-term context]`` block before it, when this event
    is where the session gets it (:func:`plan_long_term`, applied); never raises (it runs in hooks)."""
    from sidelight.engine.discovery import current_session
    from sidelight.plugins import get_plugins

    try:
        session = current_session(event, settings, plugins or get_plugins())
    except Exception:
        logger.warning("cannot tell which session this is", exc_info=True)
        session = None
    block, apply = plan_long_term(event, session, settings, plugins)
    try:
        apply()
    except Exception:
        logger.warning("cannot record the long-term context", exc_info=True)
    if block is None:
        return text
    return block if not text else f"{block}\n\n{text}"


def plan_long_term(
    event: HostEvent, session: Session | None, settings: Settings, plugins: Plugins | None = None
) -> tuple[str | None, Callable[[], None]]:
    """The ``[Long-term context]`` block due at this event (``None``: none), decided without changing
    anything, and what records that the session got it; never raises (it runs in hooks).

    The block is due at every ``SessionStart`` where the host injects at start (Claude Code, Codex:
    a new, resumed, cleared or compacted context; the hook leaves out a block the session already
    received), else with the session's first prompt (hosts that cannot inject at start,
    :func:`injects_at_start`, and the Agent SDK callback, which sees prompts only). A session is known by
    its host and id (else transcript path); a marker in ``<state dir>/long-term-given/`` records that it
    got the block, so later prompts cost one ``stat``. Applying it at a session start also records a
    host-named session's transcript for its key's history (:func:`sidelight.features.history.note_session`):
    ``session``, the event's (``None``: not known), as the hook resolved it.
    """
    try:
        return _block_for(event, session, settings, plugins)
    except Exception:
        logger.warning("cannot add the long-term context", exc_info=True)
        return None, _nothing


def _nothing() -> None:
    return None


def _plugins() -> Plugins:
    from sidelight.plugins import get_plugins

    return get_plugins()


def _block_for(
    event: HostEvent, session: Session | None, settings: Settings, plugins: Plugins | None
) -> tuple[str | None, Callable[[], None]]:
    ident = event.session_id or (str(event.transcript_path) if event.transcript_path else None)
    if ident is None:
        return None, _nothing  # no way to tell its prompts apart: better never than on every prompt
    marker = _given_marker(settings, f"{event.host}:{ident}")
    start = event.event == "SessionStart"
    if start and not injects_at_start(event.host, plugins or _plugins()):
        return None, lambda: _note_start(session, settings)
    if not start and (event.event != "UserPromptSubmit" or marker.exists()):
        return None, _nothing
    text = long_term_context(settings=settings)

    def apply() -> None:
        if start:
            _note_start(session, settings)
        if text is None:
            return
        try:
            private_dir(marker.parent)
            marker.touch(mode=0o600)
        except OSError:
            logger.info("cannot record that %s got its long-term context", ident, exc_info=True)

    return text, apply


def _note_start(session: Session | None, settings: Settings) -> None:
    from sidelight.features.history import note_session

    if session is not None:
        note_session(session, settings)


def _given_marker(settings: Settings, session_key: str) -> Path:
    return session_path(settings.state_dir, GIVEN_DIR, session_key)
