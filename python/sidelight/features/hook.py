"""What a host's hook prints: the one place that composes the features (the digest, long-term facts, the
handoff, the welcome back, the session's own context) into the answer to one host event.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Mapping

from sidelight._fast import jsonio
from sidelight._fast.logs import file_handler, get_logger, hook_log, last_line_says
from sidelight.agents import FALLBACK_HOST, start_may_resume
from sidelight.config import Settings, StateRefusedError
from sidelight.engine.discovery import current_session, listed_once
from sidelight.features.digest import plan_session_updates
from sidelight.hostio import AFTER_TOOL, BEFORE_TOOL, is_after_tool, is_before_tool
from sidelight.plugins import get_plugins
from sidelight.statefile import append_whole, private_dir, private_fd, write_atomic
from sidelight.statelayout import (
    CURSORS_DIR,
    EVENTS_FILE,
    LOG_FILE,
    PENDING_HANDOFFS_DIR,
    RECEIVED_DIR,
    session_path,
)
from sidelight.warm import failure_log_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, Final, NamedTuple

    from sidelight.features.recap.handoff import Planned
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, InjectorSpec, Session
else:
    from sidelight._fast._typing import NamedTuple

__all__ = [
    "Block",
    "LeftOut",
    "Plan",
    "answer_hook",
    "apply_plan",
    "finish_plan",
    "handle_hook",
    "host_event",
    "log_handler",
    "plan_event",
]

logger = get_logger(__name__)


def handle_hook(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
    deliver: Callable[[str | None], bool] | None = None,
) -> str | None:
    """What a host's hook must print for this input (``None``: nothing). Never raises: whatever goes
    wrong is logged to ``<state dir>/sidelight.log`` and the hook stays silent. ``deliver``: see
    :func:`answer_hook`."""
    try:
        settings = settings or Settings.load()
    except Exception as error:
        # Said in the log of the state directory the environment names, as the hook's client finds it;
        # when sidelight refuses that one (another user's), in the default one under HOME.
        folder = failure_log_dir(os.environ)
        message = f"cannot load the settings, so the hook does nothing until they are fixed: {error}"
        if folder is not None:
            log = os.path.join(folder, LOG_FILE)  # noqa: PTH118 (a str, as hook_log takes)
            # A refused state directory is said once, not at every prompt.
            if not (isinstance(error, StateRefusedError) and last_line_says(log, message)):
                with hook_log(log):
                    logger.error("%s", message)
        return None
    with hook_log(str(settings.state_dir / LOG_FILE)):
        _private_state(settings)
        return answer_hook(host, payload, settings, plugins, deliver=deliver)


def _private_state(settings: Settings) -> None:
    """Makes the state directory and its cursor folder private (``0700``) when an older version or a
    loose umask left them open: one ``lstat`` each (:func:`sidelight.statefile.private_dir`), no walk
    (``sidelight watch`` and ``sidelight status`` tighten the rest). The folders the answer writes in are
    made private as they are written; a hook that cannot still answers."""
    try:
        private_dir(settings.state_dir, create=False)
        private_dir(settings.state_dir / CURSORS_DIR, create=False)
    except OSError as error:
        logger.info("cannot make the state directory private: %s", error)


def answer_hook(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    settings: Settings,
    plugins: Plugins | None = None,
    *,
    deliver: Callable[[str | None], bool] | None = None,
) -> str | None:
    """:func:`handle_hook` once the settings are loaded and the log is set up: the in-process hook and the
    watcher's hook server (:mod:`sidelight.watch.serve`) both answer through here. Never raises.

    ``time_budget`` bounds it from here on: listing the sessions, first looks, scans, summaries.
    ``deliver`` writes the answer out (``None``: nothing to print) and says whether it did; it is
    called once, and the digest's cursors move only after it returned true: a hook killed before its
    answer was written (or a host that went away) finds the same news at the next prompt. Without it,
    the cursors move before this returns (the caller hands the answer on: the Agent SDK's hook)."""
    deadline = time.monotonic() + settings.time_budget
    plan: Plan | None = None
    output: str | None = None
    try:
        output, plan = _compose(host, payload, settings, plugins, deadline)
    except Exception:
        logger.exception("%s hook failed; nothing injected", host)
    try:
        if deliver is not None and not deliver(output):
            return output  # not written out: nothing moves
        if plan is not None:
            finish_plan(plan)
    except Exception:
        logger.exception("%s hook could not deliver its answer; nothing moved", host)
    finally:
        if plan is not None:
            plan.close()
    return output


def _compose(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    settings: Settings,
    plugins: Plugins | None,
    deadline: float,
) -> tuple[str | None, Plan | None]:
    """The answer, and its plan with the effects due before delivery carried out."""
    data = payload if isinstance(payload, Mapping) else jsonio.loads(payload or "{}")
    if not isinstance(data, Mapping):
        logger.warning("%s hook input is not a JSON object; nothing injected", host)
        return None, None
    before_tool = is_before_tool(data)
    if before_tool and settings.edit_guard == "off":
        return None, None  # the guard is off: a before-tool hook does nothing at all
    if settings.turn_news == "off" and is_after_tool(data):
        return None, None  # no news within the turn: an after-tool hook does nothing at all
    plugins = plugins or get_plugins()
    injector = plugins.injector(host)
    if injector is None:
        logger.warning("no injector for host %r (known: %s)", host, ", ".join(plugins.injectors()))
        return None, None
    event = injector.read_event(data)
    if event is None:
        if before_tool or is_after_tool(data):
            return None, None  # a tool that writes nothing, a host without news after tools: silence
        logger.warning("%s hook input not understood; nothing injected", host)
        return None, None
    if event.event == BEFORE_TOOL:
        return _guard(event, injector, settings, plugins)
    if event.event == AFTER_TOOL:
        return _news(event, injector, settings, plugins)
    if event.event == "UserPromptSubmit" and (
        event.prompt == "" or (injector.not_typed is not None and injector.not_typed(event))
    ):
        # Only a person's prompt gets a digest. Qwen Code calls its prompt hook again after every tool
        # result, with an empty prompt (what it gets reaches the model but never the transcript); Claude
        # Code calls it for a loop's tick, a background task's result, another session's message. The
        # news waits for a typed prompt, its cursors unmoved.
        logger.debug("%s: prompt hook without a typed prompt; nothing injected", host)
        return None, None
    if event.event == "SessionEnd":
        _record(settings, event)
        _drop_pending(event, settings, plugins)
        return None, None
    plan = plan_event(event, settings, plugins, applying=True, deadline=deadline)
    try:
        return injector.render(event, apply_plan(plan)), plan
    except BaseException:
        plan.close()
        raise


def _guard(
    event: HostEvent, injector: InjectorSpec, settings: Settings, plugins: Plugins
) -> tuple[str | None, Plan | None]:
    """A write tool's before-tool event: the stale-write guard's refusal or note
    (:mod:`sidelight.features.guard`), remembered once it was delivered (said once per change)."""
    from sidelight.features.guard import check_write, record_verdict

    verdict = check_write(event, settings, plugins, can_refuse=injector.refuse is not None)
    if verdict is None:
        return None, None
    # Debug, not info: the log's first record imports logging, a quarter of a cold hook's time; the
    # ledger (<state dir>/guard/) keeps what was refused, and the host shows the reason.
    logger.debug("%s: %s", "stale write refused" if verdict.refuse else "stale write noted", verdict.text)
    plan = Plan("guard", event.session_id, 0)
    plan.after.append(lambda: record_verdict(verdict))
    if verdict.refuse and injector.refuse is not None:
        return injector.refuse(event, verdict.text), plan
    return injector.render(event, verdict.text), plan


def _news(
    event: HostEvent, injector: InjectorSpec, settings: Settings, plugins: Plugins
) -> tuple[str | None, Plan | None]:
    """An after-tool event: the news within the turn (:mod:`sidelight.features.news`), remembered once
    it was delivered (told once per change, and not again by the next prompt's digest)."""
    from sidelight.features.news import check_after_tool, record_news

    news = check_after_tool(event, settings, plugins)
    if news is None:
        return None, None
    logger.debug("news within the turn: %s", news.text)
    plan = Plan("news", event.session_id, 0)
    plan.after.append(lambda: record_news(news, settings))
    return injector.render(event, news.text), plan


# --- the plan: what a host event gets, decided without changing anything ------------------------------

#: The blocks, in the order they are composed (and kept within the budget).
BLOCK_ORDER: Final = ("digest", "long-term", "handoff", "welcome-back", "session-context")
#: How many hashes of the blocks it was given a session keeps (the oldest go first).
RECEIVED_KEPT: Final = 64


class Block(NamedTuple):
    """One block of the answer: its ``name`` (one of :data:`BLOCK_ORDER`), the ``text`` sent (cut to
    the budget when ``cut``), its size, and its full text's hash (what "already received" compares)."""

    name: str
    text: str
    tokens: int
    chars: int
    cut: bool = False
    digest: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tokens": self.tokens,
            "chars": self.chars,
            "cut": self.cut,
            "text": self.text,
        }


class LeftOut(NamedTuple):
    """A block that is not sent: ``reason`` is ``"budget"`` or ``"already received"``."""

    name: str
    reason: str
    tokens: int
    chars: int

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class Plan:
    """What a host event gets (:func:`plan_event`): the blocks, what was left out, and the effects that
    :func:`apply_plan` carries out (cursors, markers, claims), none of which has happened yet.

    Plain classes (named tuples and this one), not dataclasses: the prompt hook imports this module on
    every prompt, and making a dataclass costs it about half a millisecond each."""

    __slots__ = (
        "after",
        "blocks",
        "budget",
        "closers",
        "effects",
        "event",
        "left_out",
        "received",
        "received_file",
        "session",
    )

    def __init__(self, event: str, session: str | None, budget: int) -> None:
        self.event = event
        self.session = session
        self.budget = budget
        self.blocks: list[Block] = []
        self.left_out: list[LeftOut] = []
        #: ``(block name or None, effect)``: an effect that returns ``False`` withdraws its block (a
        #: handoff another session claimed first).
        self.effects: list[tuple[str | None, Callable[[], object]]] = []
        #: Effects carried out once the answer was delivered (:func:`finish_plan`): the digest's cursors.
        self.after: list[Callable[[], object]] = []
        #: What :meth:`close` calls: the digest's reading lock, released.
        self.closers: list[Callable[[], object]] = []
        #: Where the hashes of the blocks sent are recorded (``None``: nowhere) and the ones kept there.
        self.received_file: Path | None = None
        self.received: list[str] = []

    def close(self) -> None:
        """Lets go of what the plan holds (the reader's reading lock), applied or not; later calls do
        nothing."""
        closers, self.closers = self.closers, []
        for close in closers:
            try:
                close()
            except Exception:
                logger.warning("could not release what the answer held", exc_info=True)

    @property
    def text(self) -> str | None:
        """The answer: the blocks, one blank line apart (``None``: nothing)."""
        return "\n\n".join(b.text for b in self.blocks) or None

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "session": self.session,
            "budget": self.budget,
            "tokens": self.tokens,
            "blocks": [b.as_dict() for b in self.blocks],
            "left_out": [b.as_dict() for b in self.left_out],
            "text": self.text,
        }


def plan_event(
    event: HostEvent,
    settings: Settings,
    plugins: Plugins,
    *,
    measure: bool = False,
    applying: bool = False,
    deadline: float | None = None,
) -> Plan:
    """What ``event`` (a session start or a prompt) gets, decided without moving a cursor or writing
    anything: the digest first (prompts), then long-term facts, a handoff, a welcome back, the session's
    own context, as they apply; a block the session already received is left out, and the rest is kept
    within the budget (:func:`_fit`). ``measure``: count the tokens of a digest that goes alone too (the
    hook does not: it is always sent, and the counter stays off the prompt's path). ``applying``: the
    plan will be applied (the hook), so a fleet's resolver commits as it reads, once, rather than read
    again when the plan is applied: the digest always goes out; and it holds the session's reading lock
    until the plan is finished or closed (:meth:`Plan.close`). ``deadline``: the digest's
    (:func:`sidelight.features.digest.plan_session_updates`).

    The event's session is resolved here, once, and handed to every block's planner."""
    start = event.event == "SessionStart"
    if start:
        return _plan_for(event, current_session(event, settings, plugins), settings, plugins, measure)
    # Its own session and the digest each ask for the sessions: listed once (as the watcher serves them).
    with listed_once(settings, plugins):
        session = current_session(event, settings, plugins)
        return _plan_for(event, session, settings, plugins, measure, applying=applying, deadline=deadline)


def _plan_for(
    event: HostEvent,
    session: Session | None,
    settings: Settings,
    plugins: Plugins,
    measure: bool,
    *,
    applying: bool = False,
    deadline: float | None = None,
) -> Plan:
    start = event.event == "SessionStart"
    budget = settings.start_budget if start else settings.prompt_budget
    plan = Plan("start" if start else "prompt", None if session is None else session.name, budget)
    candidates: dict[str, str] = {}
    if start:
        plan.effects.append((None, lambda: _record(settings, event)))
        _plan_start(event, session, settings, plugins, plan, candidates)
    else:
        _plan_prompt(
            event, session, settings, plugins, plan, candidates, applying=applying, deadline=deadline
        )
    if not start and candidates.keys() & {"long-term", "handoff", "kept-welcome"}:
        # What a start keeps for the first prompt (a host that cannot inject at start: Pi, the Agent
        # SDK; a welcome back Claude Code would drop at a resume) comes with the start's budget.
        plan.budget = settings.start_budget
    if "kept-welcome" in candidates:
        candidates["welcome-back"] = candidates.pop("kept-welcome")
    if candidates:
        _fit(plan, candidates, event, session, settings, plugins, measure)
    return plan


def _plan_start(
    event: HostEvent,
    session: Session | None,
    settings: Settings,
    plugins: Plugins,
    plan: Plan,
    candidates: dict[str, str],
) -> None:
    """At a session's start: long-term facts; a new session's handoff (a host that cannot inject at
    start gets it with its first prompt); for a session that comes back after at least
    ``idle_timeout`` (a start with ``source: resume``, or any start of a host whose start does not say
    so: :func:`sidelight.agents.start_may_resume`), a welcome back kept for its first prompt (a host
    may drop what a resumed session's start adds, or not inject at start); and the ``[SESSION
    CONTEXT]`` block after a compaction or a clear."""
    from sidelight.features import resume
    from sidelight.features.facts import plan_long_term
    from sidelight.features.recap import handoff

    facts, note = plan_long_term(event, session, settings)
    plan.effects.append(("long-term" if facts else None, note))
    if facts:
        candidates["long-term"] = facts
    recap = handoff.plan_start(event, session, settings, plugins)
    plan.effects.append(("handoff" if recap.text else None, recap.apply))
    if recap.text is not None:
        candidates["handoff"] = recap.text
        return
    if session is None or not session.path.exists():
        return
    source = event.raw.get("source")
    if source in ("compact", "clear"):
        # The conversation was just compacted or cleared: the session's own state, as its
        # transcript shows it, is what it lost.
        context = resume.context_text(session, settings, plugins)
        if context is not None:
            candidates["session-context"] = context
    elif source == "resume" or start_may_resume(event.host):
        last = resume.last_prompt(session, settings)
        text = resume.welcome_back(session, settings, plugins, last_prompt=last)
        if text is not None:

            def keep(text: str = text) -> None:
                logger.info(
                    "resume context for %s kept for its prompt: %s", session.name, text.split("\n", 1)[0]
                )
                resume.set_pending(session, settings, text)

            plan.effects.append((None, keep))


def _plan_prompt(
    event: HostEvent,
    session: Session | None,
    settings: Settings,
    plugins: Plugins,
    plan: Plan,
    candidates: dict[str, str],
    *,
    applying: bool = False,
    deadline: float | None = None,
) -> None:
    """At a prompt: the digest; long-term facts with a first prompt (hosts that cannot inject at start);
    a handoff kept for this first prompt (Pi), else a welcome back, once per absence: the one its
    session's start kept, else one when the session had no prompt or start for ``idle_timeout`` and its
    transcript has been quiet that long (:func:`sidelight.features.resume.welcome_back`)."""
    from sidelight.features.facts import plan_long_term

    # A handoff kept for this first prompt (Pi) moves the digest's cursor past what it covers: the
    # digest is planned from the cursors it leaves, and the handoff is applied first.
    recap = _kept_handoff(session, settings)
    digest, commit = plan_session_updates(
        event if session is None else session,  # resolved once, by plan_event
        settings=settings,
        plugins=plugins,
        cursors=None if recap is None else recap.cursors,
        commit_remote=applying,
        deadline=deadline,
        exclusive=applying,
    )
    plan.closers.append(commit.release)
    if recap is not None:
        plan.effects.append(("handoff" if recap.text else None, recap.apply))
    # The digest's cursors move once the answer is out (at least once: a hook killed before it printed
    # leaves them, and the next prompt says the same news).
    plan.after.append(commit)
    if digest is not None:
        candidates["digest"] = digest
    facts, note = plan_long_term(event, session, settings)
    plan.effects.append((None, note))
    if facts:
        candidates["long-term"] = facts
    if recap is not None and recap.text is not None:
        candidates["handoff"] = recap.text
    elif session is not None:
        _plan_welcome(event, session, settings, plugins, plan, candidates)


def _kept_handoff(session: Session | None, settings: Settings) -> Planned | None:
    """The handoff kept for this session's first prompt (:func:`.handoff.plan_prompt`), or ``None`` when
    its file is absent: nearly every prompt, which then does not import the recaps."""
    if session is None:
        return None
    if not os.path.exists(session_path(settings.state_dir, PENDING_HANDOFFS_DIR, session.key)):  # noqa: PTH110
        return None
    from sidelight.features.recap import handoff

    return handoff.plan_prompt(session, settings)


def _plan_welcome(
    event: HostEvent,
    session: Session,
    settings: Settings,
    plugins: Plugins,
    plan: Plan,
    candidates: dict[str, str],
) -> None:
    from sidelight.features import resume

    now = time.time()
    previous = resume.last_prompt(session, settings)
    text = resume.peek_pending(session, settings)
    plan.effects.append((None, lambda: resume.mark_prompt(session, settings, now)))
    plan.effects.append((None, lambda: resume.take_pending(session, settings)))
    kept = text is not None
    if text is None and previous is not None:
        text = resume.welcome_back(session, settings, plugins, now, prompt=event.prompt, last_prompt=previous)
    if text is not None:
        candidates["kept-welcome" if kept else "welcome-back"] = text

        def note(text: str = text) -> None:
            logger.info("resume context for %s with its prompt: %s", session.name, text.split("\n", 1)[0])

        plan.effects.append((None, note))


def _fit(
    plan: Plan,
    candidates: Mapping[str, str],
    event: HostEvent,
    session: Session | None,
    settings: Settings,
    plugins: Plugins,
    measure: bool,
) -> None:
    """Puts the candidate blocks in :data:`BLOCK_ORDER` into ``plan``: a block (other than the digest,
    which its cursors keep from repeating) whose text the session already received is left out; the
    digest is always kept; each other block is kept whole when it fits in what the budget has left,
    else cut at a line boundary with a marker line when its first line (its frame) and at least one
    more fit, else left out whole."""
    if set(candidates) == {"digest"} and not measure:
        # The digest alone is always sent, and ``sidelight.tokens`` stays off the prompt's path.
        digest = candidates["digest"]
        plan.blocks.append(Block("digest", digest, 0, len(digest)))
        return
    from sidelight.tokens import get_counter

    count = get_counter(plugins, settings=settings)
    fresh = event.event == "SessionStart" and event.raw.get("source") in ("compact", "clear")
    plan.received_file = _received_file(event, session, settings)
    # A compaction or a clear loses what the session was given: it may be given all of it again.
    plan.received = [] if fresh or plan.received_file is None else _read_received(plan.received_file)
    used = 0
    for name in BLOCK_ORDER:
        text = candidates.get(name)
        if text is None or not text.strip():
            continue
        tokens = count(text)
        key = _hash(text)
        if name != "digest" and key in plan.received:
            plan.left_out.append(LeftOut(name, "already received", tokens, len(text)))
            continue
        room = plan.budget - used - (1 if plan.blocks else 0)  # a blank line between blocks
        if name == "digest" or tokens <= room:
            plan.blocks.append(Block(name, text, tokens, len(text), digest=key))
            used += tokens + (1 if len(plan.blocks) > 1 else 0)
            continue
        cut = _cut(text, room, count)
        if cut is None:
            plan.left_out.append(LeftOut(name, "budget", tokens, len(text)))
            continue
        size = count(cut)
        plan.blocks.append(Block(name, cut, size, len(cut), cut=True, digest=key))
        used += size + (1 if len(plan.blocks) > 1 else 0)


def _cut(text: str, room: int, count: Callable[[str], int]) -> str | None:
    """``text``'s first lines that fit in ``room`` tokens with a marker line saying how many were left
    out; ``None`` when not even its first two lines do. A cut never ends on a blank line or a heading
    (``## Unfinished`` with nothing under it says nothing)."""
    lines = text.rstrip().split("\n")
    for keep in range(len(lines) - 1, 1, -1):
        kept = lines[:keep]
        while len(kept) > 1 and (not kept[-1].strip() or kept[-1].lstrip().startswith("#")):
            kept.pop()
        if len(kept) < 2:
            continue
        marker = f"[... {len(lines) - len(kept)} more lines left out: sidelight's budget]"
        cut = "\n".join([*kept, marker])
        if count(cut) <= room:
            return cut
    return None


def apply_plan(plan: Plan) -> str | None:
    """Carries out ``plan``'s effects due before its answer is delivered, in order (a failing one is
    logged, the others still run) and records the blocks sent as received by the session; returns the
    answer's text. Once the answer is out, :func:`finish_plan`."""
    withdrawn: set[str] = set()
    for name, effect in plan.effects:
        try:
            if effect() is False and name is not None:
                withdrawn.add(name)
        except Exception:
            logger.warning("could not apply what %s needs", name or "the answer", exc_info=True)
    if withdrawn:
        plan.blocks = [b for b in plan.blocks if b.name not in withdrawn]
    sent = [b.digest for b in plan.blocks if b.name != "digest"]
    if sent and plan.received_file is not None:
        kept = [h for h in plan.received if h not in sent] + sent
        try:
            private_dir(plan.received_file.parent)
            write_atomic(plan.received_file, jsonio.dumps(kept[-RECEIVED_KEPT:]).encode("utf-8"))
        except OSError:
            logger.info("cannot record the blocks %s received", plan.session, exc_info=True)
    return plan.text


def finish_plan(plan: Plan) -> None:
    """Carries out ``plan``'s effects due once its answer was delivered (the digest's cursors; a failing
    one is logged), then closes it."""
    try:
        for effect in plan.after:
            try:
                effect()
            except Exception:
                logger.warning("could not apply what the delivered answer needs", exc_info=True)
    finally:
        plan.close()


def _hash(text: str) -> str:
    """A short hash of ``text`` (zlib's checksums: hashlib is slow to import on the prompt path)."""
    data = text.encode("utf-8")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _received_file(event: HostEvent, session: Session | None, settings: Settings) -> Path | None:
    ident = session.key if session is not None else (event.session_id and f"{event.host}:{event.session_id}")
    if not ident:
        return None
    return session_path(settings.state_dir, RECEIVED_DIR, ident)


def _read_received(path: Path) -> list[str]:
    try:
        data = jsonio.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [h for h in data if isinstance(h, str)] if isinstance(data, list) else []


def _drop_pending(event: HostEvent, settings: Settings, plugins: Plugins) -> None:
    """A session that ends before its next prompt loses what was kept for that prompt: the handoff of a
    new Pi session, a welcome back. When it is resumed, its start judges afresh."""
    from sidelight.features import resume
    from sidelight.features.recap import handoff

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
    private_dir(settings.state_dir)
    path = settings.state_dir / EVENTS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        private_fd(fd)  # an events file an older version left 0644
        # Whole or not at all: a half line left by a full disk would swallow the next hook's line.
        append_whole(fd, (jsonio.dumps(line) + "\n").encode(), path)
    finally:
        os.close(fd)


def log_handler(settings: Settings) -> logging.Handler | None:
    """A handler that writes to the hook's log file (``<state dir>/sidelight.log``), not yet added to
    any logger (``None``: the file cannot be opened)."""
    return file_handler(str(settings.state_dir / LOG_FILE))


#: The host event names of what ``sidelight context --event`` and the dashboard ask about.
HOST_EVENTS: Final = {"prompt": "UserPromptSubmit", "start": "SessionStart"}


def host_event(session: Session, event: str, source: str | None, hosts: Any) -> HostEvent:
    """The host event ``session``'s host would send for its next ``event`` (``prompt`` or ``start``):
    what ``sidelight context`` and the dashboard plan (:func:`plan_event`) without a host: the host named
    like its format, else the built-in agents' fallback host (:data:`sidelight.agents.FALLBACK_HOST`)."""
    from pathlib import Path

    from sidelight.records import HostEvent

    host = session.format if session.format in hosts else FALLBACK_HOST
    raw: dict[str, Any] = {}
    if event == "start":
        if source is None:
            try:
                source = "resume" if session.path.stat().st_size > 0 else "startup"
            except OSError:
                source = "startup"
        raw["source"] = source
    cwd = Path(session.group) if session.group.startswith("/") and Path(session.group).is_dir() else None
    return HostEvent(
        host=host,
        event=HOST_EVENTS[event],  # type: ignore[arg-type]
        session_id=session.id,
        transcript_path=session.path,
        cwd=cwd,
        raw=raw,
    )
