"""Short-term history: messages from real transcripts, the caps, ordering, our own blocks left out,
session keys and restart seeding (real Pi sessions, real Claude Code runs), the sub-agent line, the CLI."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sidelight
from sidelight.agents import claude_code, volute
from sidelight.config import Settings
from sidelight.engine import paths, scanning
from sidelight.engine.discovery import AmbiguousSessionError, SessionNotFoundError
from sidelight.features.history import (
    MESSAGE_OVERHEAD,
    TOOL_RUN_KEPT,
    Message,
    cap_messages,
    history,
    key_string,
    messages_from_entries,
    strip_injected,
    subagent_context,
)
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins, get_plugins
from sidelight.records import TokenCounterSpec
from sidelight.statelayout import HISTORY_KEYS_FILE
from sidelight.tokens import estimate_tokens
from sidelight.types import Entry
from tests.conftest import ROOT, jsonl

DATA = ROOT / "tests" / "data"
SAMPLES = {
    "claude-code": DATA / "claude-code" / "four-tools-resume.jsonl",
    "codex": DATA / "codex" / "four-tools-resume.jsonl",
    "pi": DATA / "pi" / "four-tools-continue.jsonl",
}
CC_SAMPLE_ID = "efe363b5-b821-4830-99c4-b4c7fff4e274"
FIRST_PROMPT = "Create notes.txt with two lines, then change beta to gamma and show me the file."


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    """Resolver caches are keyed by path and live as long as the process: start each test empty."""
    volute._find_volute_mind.cache_clear()
    paths.real.cache_clear()
    volute._seen_minds.clear()


def cost(message: Message) -> int:
    return estimate_tokens(message.content) + MESSAGE_OVERHEAD


# --- transcripts written here (Pi's format: one line per message) --------------------------------------


def pi_header(
    session_id: str = "0191a000-0000-7000-8000-000000000001", cwd: str = "/tmp/p"
) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T10:00:00.000Z",
        "cwd": cwd,
    }


def pi_user(text: str, minute: int) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": f"2026-01-01T10:{minute:02d}:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


_CALL_IDS = itertools.count()


def pi_reply(minute: int, text: str | None = None, tools: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {
            "type": "toolCall",
            "id": f"call-{next(_CALL_IDS)}",
            "name": name,
            "arguments": {"command": arg, "path": arg},
        }
        for n, (name, arg) in enumerate(tools)
    ]
    if text is not None:
        content.append({"type": "text", "text": text})
    return {
        "type": "message",
        "timestamp": f"2026-01-01T10:{minute:02d}:30.000Z",
        "message": {"role": "assistant", "content": content},
    }


def conversation(turns: int, words: int = 5) -> list[dict[str, Any]]:
    """``turns`` exchanges: prompt N and reply N, each about ``words`` words long."""
    lines = [pi_header()]
    for n in range(turns):
        lines.append(pi_user(f"question {n} " + "word " * words, n % 60))
        lines.append(pi_reply(n % 60, f"answer {n} " + "word " * words))
    return lines


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonl(lines), encoding="utf-8")
    return path


# --- real transcripts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_real_samples_give_the_conversation(home: Path, fmt: str) -> None:
    messages = history(SAMPLES[fmt])
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0].content == FIRST_PROMPT
    assert messages[2].content == "What does notes.txt say now?"
    first_reply = messages[1].content.splitlines()
    shell = {"claude-code": "Bash", "pi": "bash", "codex": "exec_command"}[fmt]
    # Each tool use with one short line of its result, as the real CLI recorded it.
    assert first_reply[0] == f"[{shell} ls -la → total 8 …]"
    assert len(first_reply) == 5  # four tool lines, then the text
    assert all(line.startswith("[") and line.endswith("]") and " → " in line for line in first_reply[:4])
    read = first_reply[3]
    assert read.startswith(("[Read ", "[read ", "[exec_command cat ")) and read.endswith("alpha …]")
    wc = messages[3].content.splitlines()[0]
    assert wc.endswith("/project/notes.txt]") and " → 2 /tmp/sidelight-samples/" in wc
    assert first_reply[-1] == "notes.txt now reads alpha, gamma."
    assert messages[3].content.splitlines()[-1] == "It says alpha and gamma."
    assert messages[3].content.splitlines()[0].startswith(f"[{shell} wc -l ")
    stamps = [m.timestamp for m in messages]
    assert all(stamps) and stamps == sorted(stamps)  # type: ignore[type-var]
    # Never a raw payload: no JSON, no tool output ("alpha\nbeta" is what the read returned).
    text = "\n".join(m.content for m in messages)
    assert "{" not in text and "tool_result" not in text and "alpha\nbeta" not in text


def test_the_same_conversation_in_every_format(home: Path) -> None:
    shapes = {
        fmt: [(m.role, m.content.splitlines()[-1]) for m in history(path)] for fmt, path in SAMPLES.items()
    }
    assert shapes["claude-code"] == shapes["pi"] == shapes["codex"]


def test_real_pi_corpus_newest_last_and_capped(home: Path, pi_corpus: Path) -> None:
    path = pi_corpus / "large-session.jsonl"
    everything = messages_from_entries(sidelight.recent_entries(path, limit=100_000, text_limit=32_000))
    got = history(path, max_messages=7, max_tokens=100_000)
    assert len(got) == 7
    assert [(m.role, m.content) for m in got] == [(m.role, m.content) for m in everything[-7:]]


# --- the caps -------------------------------------------------------------------------------------------


def test_cap_by_count_keeps_the_newest_in_order(home: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", conversation(30))
    for n in (1, 2, 5, 20):
        messages = history(path, max_messages=n, max_tokens=100_000)
        assert len(messages) == n
        assert messages[-1].content == "answer 29 " + "word " * 4 + "word"
    five = history(path, max_messages=5, max_tokens=100_000)
    assert [m.content.split()[0:2] for m in five] == [
        ["answer", "27"],
        ["question", "28"],
        ["answer", "28"],
        ["question", "29"],
        ["answer", "29"],
    ]
    assert history(path, max_messages=100, max_tokens=100_000)[0].content.startswith("question 0 ")
    assert len(history(path, max_messages=100, max_tokens=100_000)) == 60


def test_cap_by_tokens(home: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", conversation(30, words=40))
    everything = history(path, max_messages=1000, max_tokens=10**9)
    assert len(everything) == 60
    for budget in (60, 200, 500, 1000, 3000):
        got = history(path, max_messages=1000, max_tokens=budget)
        used = sum(cost(m) for m in got)
        assert used <= budget
        assert got == everything[len(everything) - len(got) :]  # the newest, in order
        if len(got) < len(everything):
            # The next older message would not have fit.
            assert used + cost(everything[-len(got) - 1]) > budget


def test_a_newest_message_over_the_budget_keeps_its_end(home: Path, tmp_path: Path) -> None:
    long_reply = " ".join(f"w{n}" for n in range(3000)) + " THE-END"
    path = write(tmp_path / "s.jsonl", [pi_header(), pi_user("go", 1), pi_reply(1, long_reply)])
    got = history(path, max_tokens=300)
    assert len(got) == 1 and got[0].role == "assistant"
    assert got[0].content.startswith("… w") and got[0].content.endswith("THE-END")
    assert cost(got[0]) <= 300
    assert cost(got[0]) > 250  # it uses the budget, not a sliver of it
    assert history(path, max_tokens=MESSAGE_OVERHEAD) == []


def test_zero_caps_and_bad_caps(home: Path) -> None:
    assert history(SAMPLES["pi"], max_messages=0) == []
    assert history(SAMPLES["pi"], max_tokens=0) == []
    with pytest.raises(ValueError, match="max_messages"):
        history(SAMPLES["pi"], max_messages=-1)
    with pytest.raises(TypeError, match="max_tokens"):
        history(SAMPLES["pi"], max_tokens=2.5)  # type: ignore[arg-type]


messages_strategy = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant"]),
        content=st.text(min_size=1, max_size=300),
        timestamp=st.none(),
    ),
    max_size=30,
)


def words(text: str) -> int:
    """A simple counter for the cap's properties (the default estimate has its own tests)."""
    return len(text.split()) + text.count("\n")


@given(messages_strategy, st.integers(0, 40), st.integers(0, 300))
def test_cap_messages_properties(messages: list[Message], max_messages: int, max_tokens: int) -> None:
    got = cap_messages(messages, max_messages, max_tokens, words)

    def cost(message: Message) -> int:
        return words(message.content) + MESSAGE_OVERHEAD

    assert len(got) <= max_messages
    assert sum(cost(m) for m in got) <= max_tokens
    if got and got[-1] == (messages[-1] if messages else None):
        # A newest run of whole messages, in order.
        assert got == messages[len(messages) - len(got) :]
        if len(got) < len(messages) and len(got) < max_messages:
            assert sum(cost(m) for m in got) + cost(messages[-len(got) - 1]) > max_tokens
    elif got:
        # Only the newest message, cut to its end.
        assert len(got) == 1 and got[0].content.startswith("… ")
        assert messages[-1].content.endswith(got[0].content[2:])


def test_reads_only_the_tail(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "big.jsonl", conversation(20_000))
    asked: list[int] = []
    real = scanning.recent_entries

    def counting(*args: Any, **kwargs: Any) -> list[Entry]:
        asked.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(scanning, "recent_entries", counting)
    got = history(path, max_messages=10)
    assert len(got) == 10 and got[-1].content.startswith("answer 19999 ")
    assert asked and max(asked) <= 200  # entries asked for, out of 40,000


def test_reading_grows_until_the_caps_are_met(home: Path, tmp_path: Path) -> None:
    # The last turn has 500 tool uses: the first window holds no prompt at all.
    busy = [pi_reply(5, None, [("bash", f"step {n}")]) for n in range(500)]
    lines = [*conversation(3), pi_user("deploy it", 4), *busy, pi_reply(6, "Deployed.")]
    path = write(tmp_path / "s.jsonl", lines)
    got = history(path, max_messages=3, max_tokens=100_000)
    assert [m.role for m in got] == ["assistant", "user", "assistant"]
    assert got[1].content == "deploy it"
    reply = got[2].content.splitlines()
    assert reply[0] == f"[+{500 - TOOL_RUN_KEPT + 1} more tool uses]"
    assert reply[1:TOOL_RUN_KEPT] == [f"[bash step {n}]" for n in range(500 - TOOL_RUN_KEPT + 1, 500)]
    assert reply[-1] == "Deployed."


def test_an_empty_transcript_has_no_history(home: Path, tmp_path: Path) -> None:
    assert history(write(tmp_path / "s.jsonl", [pi_header()])) == []


# --- our own blocks, and safety -----------------------------------------------------------------------------

DIGEST = (
    "[Session Activity] (what your other sessions did since you last looked — a report, not instructions)\n"
    '- discord (3m ago, 4 messages): "how do I deploy this?" -> edited 1 file'
)


def test_our_blocks_are_cut_out_of_messages(home: Path, tmp_path: Path) -> None:
    lines = [
        pi_header(),
        pi_user(f"{DIGEST}\n\nFix the login bug", 1),
        {"type": "custom_message", "customType": "session-update", "content": DIGEST, "display": True},
        pi_reply(1, "> [Session Activity] (quoted)\n> - main (2m ago, 3 messages): x\n\nFixed it."),
        pi_user("Welcome back. Session main was idle for 2h 5m.\nCurrent task: x", 2),
        pi_reply(2, "[SESSION CONTEXT]\nSession: main (pi)\n\nStatus: idle\n[END SESSION]"),
        pi_user("[Long-term context] (remembered across sessions)\n- prefers tabs\n\nand the tests?", 3),
        pi_reply(3, "All green."),
    ]
    got = history(write(tmp_path / "s.jsonl", lines))
    assert [(m.role, m.content) for m in got] == [
        ("user", "Fix the login bug"),
        ("assistant", "Fixed it."),
        ("user", "and the tests?"),
        ("assistant", "All green."),
    ]


def test_claude_code_hook_context_never_appears(home: Path, tmp_path: Path) -> None:
    text = SAMPLES["claude-code"].read_text(encoding="utf-8")
    attachment = {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": [DIGEST]},
        "timestamp": "2026-11-21T21:20:22.700Z",
    }
    path = tmp_path / "cc.jsonl"
    path.write_text(text + json.dumps(attachment) + "\n", encoding="utf-8")
    assert "Session Activity" not in "".join(m.content for m in history(path))


def test_format_markers_from_plugins_are_cut() -> None:
    assert strip_injected("[MyHost] injected\n\nreal text", ("[MyHost]",)) == "real text"
    assert (
        strip_injected("plain text stays\n\n- a list (not a digest)")
        == "plain text stays\n\n- a list (not a digest)"
    )


def test_secrets_and_terminal_escapes_are_removed(home: Path, tmp_path: Path) -> None:
    token = "ghp_" + "a1" * 18
    lines = [
        pi_header(),
        pi_user(f"use GITHUB_TOKEN={token} please\n    indented code", 1),
        pi_reply(
            1, "done \x1b[31mred\x1b[0m\u202e", [("bash", f"curl -H 'Authorization: Bearer {token}' x")]
        ),
    ]
    got = history(write(tmp_path / "s.jsonl", lines))
    text = "\n".join(m.content for m in got)
    assert token not in text and "[REDACTED" in text
    assert "\x1b" not in text and "\u202e" not in text
    assert got[0].content.endswith("\n    indented code")  # layout kept


# --- session keys and restart seeding --------------------------------------------------------------------


# --- tool results ------------------------------------------------------------------------------------------


def pi_call(minute: int, call_id: str, name: str, arg: str) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": f"2026-01-01T10:{minute:02d}:10.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": {"command": arg}}],
        },
    }


def pi_result(minute: int, call_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    """A ``toolResult`` message as Pi 0.73 writes it."""
    return {
        "type": "message",
        "timestamp": f"2026-01-01T10:{minute:02d}:20.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "details": {},
            "isError": error,
            "timestamp": 1,
        },
    }


def test_tool_results_are_short_lines_on_their_calls(home: Path, tmp_path: Path) -> None:
    token = "ghp_" + "b2" * 18
    lines = [
        pi_header(),
        pi_user("run the tests", 1),
        pi_call(1, "c1", "bash", "pytest -q"),
        pi_result(
            1,
            "c1",
            "....FF.\n" + "E   assert 1 == 2\n" * 50 + "2 failed, 3 passed in 0.12s\n\n"
            "Command exited with code 1",
            error=True,
        ),
        pi_call(2, "c2", "bash", "cat .env"),
        pi_result(2, "c2", f"GITHUB_TOKEN={token}\nOTHER=1"),
        pi_call(3, "c3", "read", "missing.txt"),
        pi_result(3, "c3", "ENOENT: no such file or directory, open 'missing.txt'", error=True),
        pi_call(4, "c4", "bash", "cat notes.md"),
        pi_result(4, "c4", f"{DIGEST}\n\nreal notes"),
        pi_call(5, "c5", "bash", "make"),
        pi_result(5, "c5", "x" * 5000),
        pi_call(6, "c6", "bash", "true"),
        pi_result(6, "c6", ""),
        pi_call(7, "c7", "bash", "sleep 100"),  # no result yet
        pi_reply(7, "Two tests fail."),
    ]
    got = history(write(tmp_path / "s.jsonl", lines))
    assert [m.role for m in got] == ["user", "assistant"]
    tools = got[1].content.splitlines()
    assert tools[0] == "[+2 more tool uses]"  # seven tool uses: the last five kept
    assert tools[1:] == [
        "[read missing.txt → error: ENOENT: no such file or directory, open 'missing.txt']",
        "[bash cat notes.md → real notes]",  # our digest, quoted by a tool, is cut out
        "[bash make → " + "x" * 99 + "…]",  # one line, at most 100 characters
        "[bash true → (no output)]",
        "[bash sleep 100]",
        "Two tests fail.",
    ]
    text = "\n".join(m.content for m in got)
    assert token not in text and "Session Activity" not in text and "assert 1 == 2" not in text
    # The first tools, in a shorter run: a failure's last line, a secret redacted.
    short = history(write(tmp_path / "t.jsonl", lines[:6]))
    assert short[1].content.splitlines() == [
        "[bash pytest -q → exit 1: 2 failed, 3 passed in 0.12s …]",
        "[bash cat .env → GITHUB_TOKEN=[REDACTED:github-token] …]",
    ]
    assert token not in short[1].content


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_results_in_real_transcripts_keep_the_caps(home: Path, fmt: str) -> None:
    for max_messages, max_tokens in ((4, 8192), (2, 40), (1, 12)):
        got = history(SAMPLES[fmt], max_messages=max_messages, max_tokens=max_tokens)
        assert len(got) <= max_messages
        assert sum(cost(m) for m in got) <= max_tokens
    reply = history(SAMPLES[fmt], max_messages=1)[0].content
    assert " → 2 /tmp/sidelight-samples/" in reply  # the result of `wc -l`


def test_results_in_the_real_pi_corpus(home: Path, pi_corpus: Path) -> None:
    messages = history(pi_corpus / "large-session.jsonl", max_messages=200, max_tokens=1_000_000)
    lines = [line for m in messages for line in m.content.splitlines() if " → " in line]
    assert lines and all(len(line) <= 60 + 2 + 120 + 3 + 100 + 1 for line in lines)
    # Pi's failed commands end with "Command exited with code N": said as "exit N".
    assert any(" → exit 1: " in line for line in lines)


# --- Pi branches ------------------------------------------------------------------------------------------


def pi_branched(tmp_path: Path) -> Path:
    """The real Pi sample, branched as Pi 0.73 does with ``/tree`` (summarizing the branch left): the
    second turn is abandoned, and a new one goes on from the first turn's last reply."""
    records = [json.loads(line) for line in SAMPLES["pi"].read_text(encoding="utf-8").splitlines()]
    first_reply = next(r for r in records if r.get("message", {}).get("content") == [
        {"type": "text", "text": "notes.txt now reads alpha, gamma."}])  # fmt: skip
    last = records[-1]
    records += [
        {"type": "branch_summary", "id": "b5e1c0de", "parentId": first_reply["id"],
         "timestamp": "2026-11-21T21:25:00.000Z", "fromId": last["id"],
         "summary": "The user asked what notes.txt says; it says alpha and gamma."},
        {"type": "message", "id": "9e0f1a2b", "parentId": "b5e1c0de", "timestamp": "2026-11-21T21:25:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "Now delete notes.txt."}],
                     "timestamp": 1795296301000}},
        {"type": "message", "id": "3c4d5e6f", "parentId": "9e0f1a2b", "timestamp": "2026-11-21T21:25:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Deleted."}],
                     "api": "anthropic-messages", "provider": "mock", "model": "mock-model",
                     "stopReason": "stop", "timestamp": 1795296302000}},
    ]  # fmt: skip
    return write(tmp_path / "branched.jsonl", records)


def test_a_pi_session_shows_its_active_branch_only(home: Path, tmp_path: Path) -> None:
    path = pi_branched(tmp_path)
    got = history(path)
    assert [(m.role, m.content.splitlines()[-1]) for m in got] == [
        ("user", FIRST_PROMPT),
        ("assistant", "notes.txt now reads alpha, gamma."),
        ("user", "Now delete notes.txt."),
        ("assistant", "Deleted."),
    ]
    assert "What does notes.txt say now?" not in "".join(m.content for m in got)
    # The file is whole: every line is still counted (the branch left is part of the session).
    assert sidelight.scan(path).messages.user == 3
    # Going back to the branch left (a prompt whose parent is its last reply) makes it the active one.
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    back = {**records[-1], "id": "7a8b9c0d", "parentId": records[-4]["id"],
            "message": {"role": "user", "content": "And back here?"}}  # fmt: skip
    got = history(write(path, [*records, back]))
    assert [m.content.splitlines()[-1] for m in got][-3:] == [
        "What does notes.txt say now?",
        "It says alpha and gamma.",
        "And back here?",
    ]


def test_key_string() -> None:
    assert key_string(("discord", "1234")) == "discord:1234"
    assert key_string(("discord", 1234)) == "discord:1234"  # type: ignore[arg-type]
    assert key_string("main") == "main"
    for bad in ((), ("discord", ""), "  "):
        with pytest.raises(ValueError):
            key_string(bad)


def settings_for(mind: Path) -> Settings:
    return Settings.load(env={**os.environ, "SIDELIGHT_VOLUTE_DIRS": str(mind)})


def test_restart_seeding_with_real_pi_sessions(home: Path, tmp_path: Path, pi_corpus: Path) -> None:
    mind = tmp_path / "mind"
    (mind / "home").mkdir(parents=True)
    folder = mind / ".volute" / "pi-sessions" / "discord:1234"
    folder.mkdir(parents=True)
    old = folder / "2025-11-20T23-33-50-000Z_ffae836b-9420-4060-ac13-7745215f90ff.jsonl"
    shutil.copy(pi_corpus / "before-compaction.jsonl", old)
    os.utime(old, (1_700_000_000, 1_700_000_000))
    settings = settings_for(mind)
    plugins = get_plugins()
    before = history(("discord", "1234"), max_messages=6, settings=settings, plugins=plugins)
    assert len(before) == 6
    assert before == history(old, max_messages=6, settings=settings, plugins=plugins)

    # The host restarts: Pi starts a new transcript, with nothing in it but its header yet.
    new = write(folder / "2026-01-01T10-00-00-000Z_0191a000-0000-7000-8000-000000000001.jsonl", [pi_header()])
    listed = [s for s in volute.list_sessions(settings) if s.name == "discord:1234"]
    assert [s.path for s in listed] == [new]  # the resolver now names the new, empty transcript
    assert history(("discord", "1234"), max_messages=6, settings=settings, plugins=plugins) == before

    # The first exchange after the restart comes after the seeded messages, newest last.
    write(new, [pi_header(), pi_user("are you back?", 1), pi_reply(1, "Yes.")])
    after = history(("discord", "1234"), max_messages=6, settings=settings, plugins=plugins)
    assert [m.content for m in after[-2:]] == ["are you back?", "Yes."]
    assert after[:-2] == before[-4:]
    # The same key as a string, the CLI's way.
    assert history("discord:1234", max_messages=6, settings=settings, plugins=plugins) == after


def make_sdk_mind(tmp_path: Path, home: Path, name: str, session_id: str, source: Path | None) -> Path:
    mind = tmp_path / "mind"
    (mind / "home").mkdir(parents=True, exist_ok=True)
    sessions = mind / ".volute" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{name}.json").write_text(json.dumps({"sessionId": session_id}))
    if source is not None:
        project = home / ".claude" / "projects" / claude_code.claude_sanitize(str((mind / "home").resolve()))
        project.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, project / f"{session_id}.jsonl")
    return mind


def test_restart_seeding_with_real_claude_code_runs(home: Path, tmp_path: Path) -> None:
    mind = make_sdk_mind(tmp_path, home, "discord:1234", CC_SAMPLE_ID, SAMPLES["claude-code"])
    settings = settings_for(mind)
    plugins = get_plugins()
    before = history(("discord", "1234"), settings=settings, plugins=plugins)
    assert [m.content for m in before][::2] == [FIRST_PROMPT, "What does notes.txt say now?"]
    assert (settings.state_dir / HISTORY_KEYS_FILE).stat().st_mode & 0o777 == 0o600

    # Restart: the host starts a new Agent SDK session for the channel; its transcript is not written yet.
    new_id = "0a0a0a0a-0000-4000-8000-000000000001"
    make_sdk_mind(tmp_path, home, "discord:1234", new_id, None)
    paths.real.cache_clear()
    assert history(("discord", "1234"), settings=settings, plugins=plugins) == before

    # Then it is (a real run: the subagent sample), and its messages follow the seeded ones.
    make_sdk_mind(tmp_path, home, "discord:1234", new_id, DATA / "claude-code" / "subagent.jsonl")
    after = history(("discord", "1234"), max_messages=20, settings=settings, plugins=plugins)
    newest = history(DATA / "claude-code" / "subagent.jsonl", settings=settings, plugins=plugins)
    assert after == before + newest
    capped = history(("discord", "1234"), max_messages=3, settings=settings, plugins=plugins)
    assert capped == (before + newest)[-3:]


def test_unknown_and_ambiguous_keys(home: Path, tmp_path: Path) -> None:
    settings = Settings.load()
    plugins = get_plugins()
    with pytest.raises(SessionNotFoundError, match="discord:9"):
        history(("discord", "9"), settings=settings, plugins=plugins)
    minds = []
    for n, name in enumerate(("a", "b")):
        mind = tmp_path / name
        write(mind / ".volute" / "pi-sessions" / "discord" / f"2026_{n}.jsonl", conversation(2))
        minds.append(str(mind))
    both = Settings.load(env={**os.environ, "SIDELIGHT_VOLUTE_DIRS": os.pathsep.join(minds)})
    with pytest.raises(AmbiguousSessionError, match="volute:"):
        history(("discord",), settings=both, plugins=plugins)
    # A key names one of them exactly.
    key = f"volute:{Path(minds[0]).resolve()}:discord"
    assert len(history(key, settings=both, plugins=plugins)) == 4


# --- the sub-agent context --------------------------------------------------------------------------------


def test_subagent_context_from_a_real_run(home: Path) -> None:
    line = subagent_context(SAMPLES["claude-code"])
    assert line is not None and "\n" not in line
    assert line.startswith('Context from main conversation: the user asked "What does notes.txt say now?"')
    assert "done so far: Bash wc -l " in line
    assert line.endswith('last reply: "It says alpha and gamma."')


def test_subagent_context_is_capped_and_needs_a_request(home: Path, tmp_path: Path) -> None:
    long = write(
        tmp_path / "s.jsonl",
        [
            pi_header(),
            pi_user("refactor " * 300, 1),
            pi_reply(1, "on it", [("edit", f"f{n}.py") for n in range(9)]),
        ],
    )
    line = subagent_context(long, limit=300)
    assert line is not None and len(line) <= 300
    assert subagent_context(write(tmp_path / "e.jsonl", [pi_header()])) is None


# --- the command line -------------------------------------------------------------------------------------


def test_cli_history(run_cli, home: Path) -> None:
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    result = run_cli("history", SAMPLES["pi"], "--max-messages", "2", "--json", env=env)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["role"] for r in records] == ["user", "assistant"]
    assert records[0] == {
        "role": "user",
        "content": "What does notes.txt say now?",
        "timestamp": "2026-11-21T21:20:30.803Z",
    }
    human = run_cli("history", SAMPLES["pi"], "-n", "2", env=env)
    assert human.returncode == 0
    lines = human.stdout.splitlines()
    assert lines[0].endswith("] User:") and lines[1] == "    What does notes.txt say now?"
    assert lines[-1] == "    It says alpha and gamma."
    context = run_cli("history", SAMPLES["pi"], "--subagent-context", env=env)
    assert context.stdout.startswith("Context from main conversation: ")
    tokens = run_cli("history", SAMPLES["pi"], "--max-tokens", "20", "--json", env=env)
    assert len(tokens.stdout.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["history", "no-such-session"], 1, "no session matches 'no-such-session'"),
        (["history", "/nope/x.jsonl"], 1, "no such file"),
        (["history", "x", "--max-messages", "0"], 2, "must be at least 1"),
        (["history", "x", "--max-tokens", "many"], 2, "must be a number of tokens"),
    ],
)
def test_cli_history_errors(run_cli, home: Path, args: list[str], code: int, message: str) -> None:
    result = run_cli(*args, env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")})
    assert result.returncode == code
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_public_api() -> None:
    assert sidelight.history is history
    assert sidelight.Message is Message
    assert sidelight.subagent_context is subagent_context
    assert Message("user", "hi", None).as_dict() == {"role": "user", "content": "hi", "timestamp": None}


class Counters:
    """Token counters as a plugin brings them: a word counter, and one that is broken."""

    @hookimpl
    def sidelight_token_counters(self) -> Iterator[TokenCounterSpec]:
        yield TokenCounterSpec(name="words", count=lambda text: len(text.split()))
        yield TokenCounterSpec(name="broken", count=lambda text: 1 // 0)


def test_a_plugin_counter_is_used_and_a_broken_one_never_breaks_history(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(Counters(), name="counters")
    path = write(tmp_path / "s.jsonl", conversation(30, words=40))
    monkeypatch.setenv("SIDELIGHT_TOKEN_COUNTER", "words")
    got = history(path, max_messages=100, max_tokens=500, settings=Settings.load(), plugins=plugins)
    used = sum(len(m.content.split()) + MESSAGE_OVERHEAD for m in got)
    assert 500 - 50 < used <= 500  # messages of 46 words: the word count decided
    monkeypatch.setenv("SIDELIGHT_TOKEN_COUNTER", "broken")
    got = history(path, max_messages=100, max_tokens=500, settings=Settings.load(), plugins=plugins)
    assert got and sum((len(m.content) + 3) // 4 + MESSAGE_OVERHEAD for m in got) <= 500
    assert caplog.text.count("the token counter failed") == 1


def test_a_command_the_person_ran_is_theirs(home: Path, pi_corpus: Path) -> None:
    messages = history(pi_corpus / "before-compaction.jsonl", max_messages=40, max_tokens=100_000)
    at = next(i for i, m in enumerate(messages) if m.content.startswith("[bashExecution ls → "))
    assert messages[at].role == "user"
    assert (messages[at - 1].role, messages[at - 1].content) == ("user", "ls")
