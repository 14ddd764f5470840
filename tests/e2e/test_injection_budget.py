"""Issue 17's end-to-end check of the composer: over a scripted run of several sessions of the real CLIs
in one project (Claude Code, Pi, Codex; 20 prompts, resumes included), no sidelight block reaches a
model twice in one session, and every answer stays within its budget, counted from what the mock
received.

Each CLI run is one turn of one session. The turn's injection is read from the first model request of
the run, in the part of the conversation that is new since that session's previous turn (a request
resends the whole conversation): Claude Code's ``system`` messages (``SessionStart hook additional
context: …`` / ``UserPromptSubmit hook additional context: …``, merged into one system message on a
session's first turn), Codex's ``developer`` messages (before the prompt: the start's, after it: the
prompt's), Pi's ``user`` message after the prompt (Pi injects nothing at start). Each answer is split
into sidelight's blocks at their headers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.tokens import estimate_tokens
from tests.e2e.conftest import AgentEnv, RunResult, _item_texts
from tests.e2e.mockapi import RecordedRequest, bash, edit, say, write

pytestmark = pytest.mark.e2e

#: How each block the composer sends begins (`sidelight.features.hook.BLOCK_ORDER`): the digest
#: (`sidelight.features.digest.HEADER`), long-term facts (`sidelight.features.facts.HEADER`), the handoff
#: (`sidelight.features.recap.handoff.FRAME`), the welcome back and the session's own context
#: (`sidelight.features.lifecycle`).
HEADERS = {
    "[Session Activity]": "digest",
    "[Long-term context]": "long-term",
    "[Handoff]": "handoff",
    "Welcome back. Session ": "welcome-back",
    "[SESSION CONTEXT]": "session-context",
}
#: A block begins at the start of an answer or after the blank line that separates blocks.
_BLOCK_START = re.compile(r"(?:^|(?<=\n\n))(?=" + "|".join(re.escape(h) for h in HEADERS) + ")")
#: Claude Code's framing of a hook's context in its `system` messages. On a session's first turn both
#: land in the one system message, the start's before `# Environment`, the prompt's before the date.
_CLAUDE_CONTEXT = re.compile(
    r"(SessionStart|UserPromptSubmit) hook additional context: (.*?)"
    r"(?=\n\n(?:# Environment\n|Today's date is |SessionStart hook|UserPromptSubmit hook)|\Z)",
    re.DOTALL,
)
#: What a block must not carry the same of twice in a session: a digest line names an agent, a session
#: and what it did (the prompt in quotes, its files and commands, its last reply); its time and count
#: of messages in parentheses change as time goes by.
_DIGEST_LINE = re.compile(r'^- (\S+) (\S+) \([^)]*\)(?:: "([^"]*)")?(.*)$')

FACTS = (
    "The user prefers tabs over spaces in every Python file of this repository",
    "Release notes are written in the imperative mood and wrapped at 100 columns",
    "The parser must stay free of third-party dependencies; only the standard library",
    "Integration tests run against the loopback mock, never against a live service",
    "Commit messages start with the area they touch, a colon, and a short summary of the change",
    "The benchmark numbers are taken on the idle two-core machine, three runs, keeping the median",
    "Error messages name the file and the line, and say what to do about the problem",
    "The user reviews every change to the public API before it is merged into the main branch",
)


@dataclass
class Turn:
    """One prompt of one session: the run, where its requests are in the mock's log, and what sidelight
    injected at the session's start and with the prompt (each a list of blocks; `None`: no answer)."""

    session: str
    label: str
    prompt: str
    run: RunResult
    requests: list[RecordedRequest]
    start: list[str] | None = None
    answer: list[str] | None = None
    notes: list[str] = field(default_factory=list)


def blocks_of(text: str) -> list[str]:
    """An answer split into sidelight's blocks (each from its header to the blank line before the next)."""
    text = text.strip("\n")
    starts = [m.start() for m in _BLOCK_START.finditer(text)]
    assert starts and starts[0] == 0, f"an answer that does not begin with a sidelight block:\n{text[:600]}"
    return [text[a:b].rstrip("\n") for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def kind(block: str) -> str:
    return next(name for header, name in HEADERS.items() if block.startswith(header))


def cost(blocks: Sequence[str]) -> int:
    """What the composer counts for an answer: each block's tokens, and one for each blank line between."""
    return sum(estimate_tokens(b) for b in blocks) + max(0, len(blocks) - 1)


def _items(request: RecordedRequest) -> list[Any]:
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("messages") or body.get("input") or []
    return items if isinstance(items, list) else []


def _header_count(texts: Sequence[str]) -> int:
    return sum(len(_BLOCK_START.findall(t.strip("\n"))) for t in texts)


def split_turn(client: str, new_items: Sequence[Any], prompt: str) -> tuple[str | None, str | None]:
    """The text injected at the start and with the prompt, in the items new in this turn."""
    at = next(
        (
            i
            for i, it in enumerate(new_items)
            if it.get("role") == "user" and any(prompt in t for t in _item_texts(it))
        ),
        None,
    )
    assert at is not None, f"the prompt {prompt!r} is not in the new part of its turn"
    start: list[str] = []
    answer: list[str] = []
    for index, item in enumerate(new_items):
        texts = _item_texts(item)
        if client == "claude" and item.get("role") == "system":
            for text in texts:
                for m in _CLAUDE_CONTEXT.finditer(text):
                    (start if m.group(1) == "SessionStart" else answer).append(m.group(2))
        elif client == "codex" and item.get("role") == "developer":
            mine = [t for t in texts if _BLOCK_START.match(t)]
            (start if index < at else answer).extend(mine)
        elif client == "pi" and item.get("role") == "user" and index > at:
            mine = [t for t in texts if _BLOCK_START.match(t)]
            assert index == at + 1 or not mine, "Pi's answer is the message right after the prompt"
            answer.extend(mine)
    # Nothing that looks like a sidelight block anywhere else in the turn.
    found = _header_count(start) + _header_count(answer)
    everywhere = _header_count([t for it in new_items for t in _item_texts(it) for t in _split_claude(t)])
    assert found == everywhere, f"{found} blocks extracted, {everywhere} headers in the turn"
    assert len(start) <= 1 and len(answer) <= 1, (start, answer)
    return (start[0] if start else None), (answer[0] if answer else None)


def _split_claude(text: str) -> list[str]:
    """A Claude Code system message's hook contexts as separate texts (any other text as it is)."""
    parts = [m.group(2) for m in _CLAUDE_CONTEXT.finditer(text)]
    return parts or [text]


def digest_key(line: str) -> tuple[str, ...] | None:
    m = _DIGEST_LINE.match(line)
    return None if m is None else (m.group(1), m.group(2), m.group(3) or "", m.group(4))


def test_no_block_twice_in_a_session_and_every_answer_within_its_budget(agents: AgentEnv) -> None:
    defaults = Settings(home=agents.home, state_dir=agents.home / "state")  # the budgets' defaults
    prompt_budget, start_budget = defaults.prompt_budget, defaults.start_budget
    assert (prompt_budget, start_budget) == (200, 800)
    # A start smaller than the default, so that a new session's facts and handoff overflow it: the run
    # must see a start cut to its budget (a recap is sized to what its session holds).
    start_budget = 600
    budgets = {"SIDELIGHT_START_BUDGET": str(start_budget)}
    agents.install_sidelight("claude-code", "pi", "codex")
    for fact in FACTS:
        agents.sidelight("remember", fact)
    p = agents.project

    def busy(n: int, what: str, report: int = 0) -> list[Any]:
        """A turn with news for the digest: a file written, a command run, a reply to quote (with
        `report` paragraphs after it: a long turn makes a long recap for the next session's handoff)."""
        reply = f"{what}: step {n} done; the {what} module now has {n} steps and the tests pass."
        details = (
            f"Paragraph {i} of step {n} explains what changed in the {what} module, why the change was "
            f"needed, which edge cases the new tests cover, and what is left for step {n + 1}."
            for i in range(report)
        )
        return [
            write(str(p / f"{what}_{n}.py"), f"def step_{n}():\n    return {n}\n"),
            bash(f"echo {what} step {n} > {what}_{n}.log"),
            say("\n\n".join([reply, *details])),
        ]

    # (session, label of the CLI call, prompt, script of the turn, extra env)
    idle = {"SIDELIGHT_IDLE_TIMEOUT": "2s"}
    plan: list[tuple[str, str, list[Any], dict[str, str]]] = [
        ("A", "A1 fix the parser and write its tests", busy(1, "parser", 100), {}),
        ("A", "A2 add error messages to the parser", busy(2, "parser", 100), {}),
        (
            "A",
            "A3 rename the tokenizer",
            [edit(str(p / "parser_1.py"), "step_1", "step_one"), *busy(3, "parser", 100)],
            {},
        ),
        ("A", "A4 split the lexer out", busy(8, "parser", 100), {}),
        ("A", "A5 document the grammar", busy(9, "parser", 100), {}),
        ("P", "P1 draft the release notes", busy(1, "notes"), {}),
        ("A", "A6 what did the others do", busy(4, "parser"), {}),
        ("C", "C1 run the benchmark", busy(1, "bench"), {}),
        ("P", "P2 add the benchmark numbers", busy(2, "notes"), {}),
        ("A", "A7 fix the failing test", busy(5, "parser"), {}),
        ("B", "B1 review the parser", busy(1, "review"), {}),
        ("C", "C2 profile the slow path", busy(2, "bench"), {}),
        ("B", "B2 comment on error messages", busy(2, "review"), {}),
        ("P", "P3 link the review", busy(3, "notes"), {}),
        ("A", "A8 where was I", busy(6, "parser"), idle),
        ("C", "C3 compare with last week", busy(3, "bench"), idle),
        ("B", "B3 approve the change", busy(3, "review"), {}),
        ("P", "P4 polish the wording", busy(4, "notes"), idle),
        ("A", "A9 tag the release", busy(7, "parser"), {}),
        ("C", "C4 archive the results", busy(4, "bench"), {}),
        ("B", "B4 close the review", busy(4, "review"), {}),
        ("P", "P5 publish the notes", busy(5, "notes"), {}),
    ]
    assert len(plan) >= 20 and len({s for s, *_ in plan}) >= 3
    agents.mock.set_script([turn for _, _, turn, _ in plan])

    client = {"A": "claude", "B": "claude", "P": "pi", "C": "codex"}
    handle: dict[str, Any] = {}
    turns: list[Turn] = []
    for session, prompt, _, extra in plan:
        env = {**budgets, **extra}
        before = len(agents.mock.requests)
        if client[session] == "claude":
            run = agents.claude(prompt, resume=handle.get(session), env=env)
            handle.setdefault(session, run.session_id)
        elif client[session] == "pi":
            run = agents.pi(prompt, session=handle.get(session), env=env)
            handle.setdefault(session, run.transcript)
        else:
            run = agents.codex(prompt, resume=handle.get(session), env=env)
            handle.setdefault(session, run.session_id)
        assert handle[session], run.describe()
        # The requests of this run: the main agent's (a side request offers no tools).
        mine = [
            r
            for r in agents.mock.requests[before:]
            if r.path.startswith("/v1/") and isinstance(r.body, dict) and r.body.get("tools")
        ]
        assert mine, f"{prompt}: no model request\n{agents.mock.summary()}"
        turns.append(Turn(session, prompt.split()[0], prompt, run, mine))

    # What each turn injected: the new part of its first request, after the session's previous turn.
    previous: dict[str, list[Any]] = {}
    for turn in turns:
        items = _items(turn.requests[0])
        seen = len(previous.get(turn.session, []))
        start, answer = split_turn(client[turn.session], items[seen:], turn.prompt)
        turn.start = None if start is None else blocks_of(start)
        turn.answer = None if answer is None else blocks_of(answer)
        previous[turn.session] = _items(turn.requests[-1])

    report = describe(turns)
    print(report)  # the report quotes the sizes

    # (a) No block twice in a session, and no digest line about the same activity twice.
    for session in client:
        given: dict[str, str] = {}
        lines: dict[tuple[str, ...], str] = {}
        prompts_seen: dict[str, str] = {}
        for turn in (t for t in turns if t.session == session):
            for where, blocks in (("start", turn.start), ("prompt", turn.answer)):
                for block in blocks or []:
                    assert block not in given, (
                        f"session {session}: the same {kind(block)} block again at {turn.label} ({where}), "
                        f"first at {given.get(block)}:\n{block[:800]}\n\n{report}"
                    )
                    given[block] = f"{turn.label} ({where})"
                    if kind(block) != "digest":
                        continue
                    for line in block.splitlines()[1:]:
                        key = digest_key(line)
                        if key is None:
                            assert re.fullmatch(r"\+\d+ more sessions?", line), line
                            continue
                        assert key not in lines, (
                            f"session {session}: a digest line again at {turn.label}:\n{line}\n"
                            f"first at {lines[key]}\n\n{report}"
                        )
                        lines[key] = turn.label
                        # What a digest line quotes (a sibling's prompt) was not reported to this
                        # session before, by a digest or by a handoff.
                        if not key[2]:
                            continue  # a line without its prompt (no room): the line itself is unique
                        quoted = f"{key[0]} {key[1]}: {key[2]}"
                        assert quoted not in prompts_seen, (
                            f"session {session}: {quoted!r} reported again at {turn.label} "
                            f"(first at {prompts_seen.get(quoted)})\n\n{report}"
                        )
                        prompts_seen[quoted] = turn.label
                        for earlier, label in given.items():
                            if kind(earlier) == "handoff":
                                assert f'"{key[2]}"' not in earlier, (
                                    f"session {session}: {key[2]!r} was in the handoff at {label} and "
                                    f"in a digest at {turn.label}\n\n{report}"
                                )

    # (b) Every start within the start budget; every prompt within the prompt budget, except a first
    # prompt that carries what a start kept (facts or a handoff on Pi, a welcome back): the start's.
    for turn in turns:
        if turn.start:
            assert cost(turn.start) <= start_budget, f"{turn.label} start over budget\n{report}"
        if turn.answer:
            kept = {kind(b) for b in turn.answer} & {"long-term", "handoff", "welcome-back"}
            budget = start_budget if kept else prompt_budget
            assert cost(turn.answer) <= budget, f"{turn.label} prompt over {budget} tokens\n{report}"

    # The run exercised what it checks: facts, handoffs, welcome backs and digests all reached the
    # sessions, a start was cut to its budget, and Codex's resumed starts were judged again.
    kinds = {kind(b) for t in turns for b in (t.start or []) + (t.answer or [])}
    assert {"digest", "long-term", "handoff", "welcome-back"} <= kinds, report
    assert sum(1 for t in turns if t.answer and kind(t.answer[0]) == "digest") >= 10, report
    assert any("sidelight's budget]" in b for t in turns for b in (t.start or []) + (t.answer or [])), report
    assert "ERROR" not in agents.sidelight_log, agents.sidelight_log


def describe(turns: Sequence[Turn]) -> str:
    """One line per turn: what it got at its start and with its prompt, block by block, in tokens."""
    out = []
    for t in turns:

        def fmt(blocks: list[str] | None) -> str:
            if not blocks:
                return "-"
            parts = [f"{kind(b)} {estimate_tokens(b)}{' cut' if 'budget]' in b else ''}" for b in blocks]
            return f"{cost(blocks)} [{', '.join(parts)}]"

        out.append(f"{t.label:4} {t.session}: start {fmt(t.start)}; prompt {fmt(t.answer)}")
    return "\n".join(out)
