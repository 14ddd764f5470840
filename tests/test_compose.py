"""One composer: every block of a host event in one budget, in one order, never twice in a
session, and ``sidelight context`` shows the answer without moving anything."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidelight.cli import main
from sidelight.config import ConfigError, Settings
from sidelight.engine.discovery import current_session
from sidelight.features import resume
from sidelight.features.facts import add_fact
from sidelight.features.hook import Plan, _fit, handle_hook, plan_event
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import HostEvent, ResolverSpec, Session, SessionActivity
from sidelight.tokens import estimate_tokens
from tests.support.hook_world import HookWorld, session_id


def context_of(output: str | None) -> str | None:
    return None if output is None else str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


def lines(header: str, n: int, words: int = 8) -> str:
    return "\n".join([header, *(f"- line {i} " + " ".join(["word"] * words) for i in range(n))])


def fitted(candidates: dict[str, str], budget: int, tmp_path: Path) -> Plan:
    settings = Settings(home=tmp_path, state_dir=tmp_path / "state")
    plan = Plan("prompt", "s", budget)
    event = HostEvent(host="claude-code", event="UserPromptSubmit", session_id="s")
    _fit(plan, candidates, event, None, settings, Plugins(entry_points=False), measure=True)
    return plan


def test_the_digest_comes_first_and_is_always_kept(tmp_path: Path) -> None:
    digest = lines("[Session Activity] (report)", 12)  # more than the whole budget on its own
    plan = fitted({"long-term": lines("[Long-term context]", 2), "digest": digest}, 40, tmp_path)
    assert [b.name for b in plan.blocks] == ["digest"]
    assert plan.blocks[0].text == digest and plan.blocks[0].tokens > 40
    assert [(x.name, x.reason) for x in plan.left_out] == [("long-term", "budget")]


def test_a_block_that_does_not_fit_is_cut_at_a_line_with_a_marker(tmp_path: Path) -> None:
    digest = lines("[Session Activity] (report)", 2)
    handoff = lines("[Handoff] the previous session", 40)
    plan = fitted({"digest": digest, "handoff": handoff}, 200, tmp_path)
    assert [b.name for b in plan.blocks] == ["digest", "handoff"]
    cut = plan.blocks[1]
    assert cut.cut and cut.text.startswith("[Handoff] the previous session\n- line 0 ")
    assert cut.text.splitlines()[-1].endswith("more lines left out: sidelight's budget]")
    assert set(cut.text.splitlines()[:-1]) <= set(handoff.splitlines())  # whole lines only
    assert plan.tokens <= 200 and estimate_tokens(plan.text or "") <= 200 + 2
    assert plan.text == f"{digest}\n\n{cut.text}"


def test_a_cut_never_ends_on_a_heading_or_a_blank_line(tmp_path: Path) -> None:
    head = lines("[Handoff] the previous session", 6)
    failing = "\n".join(f"- failing {i} " + "word " * 12 for i in range(30))
    handoff = f"{head}\n\n## Unfinished\n{failing}"
    # Room for the heading and the marker, not for a line under the heading.
    room = estimate_tokens(f"{head}\n\n## Unfinished\n[... 33 more lines left out: sidelight's budget]") + 3
    plan = fitted({"handoff": handoff}, room, tmp_path)
    (cut,) = plan.blocks
    kept, marker = cut.text.splitlines()[:-1], cut.text.splitlines()[-1]
    assert kept == head.splitlines()  # the blank line and the bare heading went with the rest
    more = len(handoff.splitlines()) - len(kept)
    assert marker == f"[... {more} more lines left out: sidelight's budget]"


def test_a_block_whose_first_lines_do_not_fit_is_left_out_whole(tmp_path: Path) -> None:
    digest = lines("[Session Activity] (report)", 8)
    plan = fitted({"digest": digest, "welcome-back": lines("Welcome back. " + "x " * 60, 3)}, 90, tmp_path)
    assert [b.name for b in plan.blocks] == ["digest"]
    assert [(x.name, x.reason) for x in plan.left_out] == [("welcome-back", "budget")]


def test_blocks_keep_their_order_whatever_their_size(tmp_path: Path) -> None:
    blocks = {
        "session-context": "[SESSION CONTEXT]\n- a\n[END SESSION]",
        "welcome-back": "Welcome back.\n- b",
        "long-term": "[Long-term context]\n- c",
        "digest": "[Session Activity]\n- d",
    }
    plan = fitted(blocks, 800, tmp_path)
    assert [b.name for b in plan.blocks] == ["digest", "long-term", "welcome-back", "session-context"]


def test_the_budgets_are_settings(tmp_path: Path) -> None:
    base = {"HOME": str(tmp_path), "SIDELIGHT_STATE_DIR": str(tmp_path / "state")}
    default = Settings.load(env=base, home=tmp_path)
    assert (default.prompt_budget, default.start_budget) == (200, 800)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "config.toml").write_text("prompt_budget = 150\nstart_budget = 1200\n")
    configured = Settings.load(env=base, home=tmp_path)
    assert (configured.prompt_budget, configured.start_budget) == (150, 1200)
    from_env = Settings.load(env={**base, "SIDELIGHT_PROMPT_BUDGET": "99"}, home=tmp_path)
    assert (from_env.prompt_budget, from_env.start_budget) == (99, 1200)
    with pytest.raises(ConfigError, match="prompt_budget must be a number of tokens"):
        Settings.load(env={**base, "SIDELIGHT_PROMPT_BUDGET": "lots"}, home=tmp_path)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HookWorld:
    world = HookWorld(tmp_path, sessions=2)
    for key in list(__import__("os").environ):
        if key.startswith(("SIDELIGHT_", "CLAUDE_", "CODEX_", "PI_", "XDG_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(world.state))
    return world


def start(world: HookWorld, n: int, source: str) -> str | None:
    payload = json.loads(world.payload(n))
    payload.update(hook_event_name="SessionStart", source=source)
    return context_of(handle_hook("claude-code", payload, plugins=Plugins(entry_points=False)))


def prompt(world: HookWorld, n: int) -> str | None:
    return context_of(handle_hook("claude-code", world.payload(n), plugins=Plugins(entry_points=False)))


def test_facts_are_not_given_again_on_a_resume_but_are_after_a_compaction(world: HookWorld) -> None:
    add_fact("prefers short answers")
    first = start(world, 0, "startup")
    assert first is not None and first.startswith("[Long-term context]")
    assert start(world, 0, "resume") is None  # already received, in the same words
    again = start(world, 0, "compact")  # the compaction lost it
    assert again is not None and again.startswith("[Long-term context]")
    add_fact("uses pnpm", "agent")  # new words: a new block
    changed = start(world, 0, "resume")
    assert changed is not None and "uses pnpm" in changed
    assert start(world, 1, "startup") is not None  # another session has its own record


def test_the_same_welcome_back_is_not_given_twice(world: HookWorld) -> None:
    settings = Settings.load()
    plugins = Plugins(entry_points=False)
    event = HostEvent("claude-code", "UserPromptSubmit", session_id(0), world.transcript(0), world.project)
    session = current_session(event, settings, plugins)
    assert session is not None
    prompt(world, 0)  # the first look
    resume.set_pending(session, settings, "Welcome back. Session 00000000 was idle for 2h.")
    assert prompt(world, 0) == "Welcome back. Session 00000000 was idle for 2h."
    resume.set_pending(session, settings, "Welcome back. Session 00000000 was idle for 2h.")
    assert prompt(world, 0) is None
    assert resume.peek_pending(session, settings) is None  # taken all the same


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """The state a hook moves: not the log, nor the entry-point cache (kept or not depending on how
    recently a ``sys.path`` folder changed, such as the checkout's own: plugins.entry_points)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "sidelight.log" and not p.name.startswith("entry-points-")
    }


def run_context(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["context", *args]) == 0
    return out.getvalue()


def test_context_shows_what_the_next_hook_injects_and_moves_nothing(world: HookWorld) -> None:
    add_fact("prefers short answers")
    first = prompt(world, 0)  # the first look: cursors saved, the facts given
    assert first is not None and "[Long-term context]" in first
    world.prompt(1, "news from the sibling")
    before = snapshot(world.state)
    shown = json.loads(run_context(session_id(0)[:8], "--json"))
    text = run_context(session_id(0)[:8])
    assert snapshot(world.state) == before  # no cursor, marker or record moved
    assert [b["name"] for b in shown["blocks"]] == ["digest"]
    assert shown["event"] == "prompt" and shown["budget"] == 200
    assert "news from the sibling" in shown["text"]
    assert text.splitlines()[0].startswith("00000000: next prompt, ")
    assert "== digest: " in text and shown["text"] in text
    # The hook then injects exactly that, and moves the cursors.
    assert prompt(world, 0) == shown["text"]
    assert snapshot(world.state) != before
    assert json.loads(run_context(session_id(0)[:8], "--json"))["text"] is None


def test_context_at_a_start_shows_what_was_left_out(world: HookWorld) -> None:
    add_fact("prefers short answers")
    before = snapshot(world.state)
    shown = json.loads(run_context(session_id(0), "--event", "start", "--source", "startup", "--json"))
    assert snapshot(world.state) == before
    assert [b["name"] for b in shown["blocks"]] == ["long-term"] and shown["budget"] == 800
    assert start(world, 0, "startup") == shown["text"]
    again = json.loads(run_context(session_id(0), "--event", "start", "--json"))  # a resume
    assert again["blocks"] == []
    assert [(x["name"], x["reason"]) for x in again["left_out"]] == [("long-term", "already received")]
    assert "-- left out: long-term (already received)" in run_context(session_id(0), "--event", "start")


class RemoteSiblings:
    """A fleet-like plugin: its resolver reports one remote sibling and records how it was asked."""

    def __init__(self) -> None:
        self.asked: list[bool] = []

    @hookimpl
    def sidelight_resolvers(self) -> Iterator[ResolverSpec]:
        yield ResolverSpec(
            name="remote-test",
            list_sessions=lambda settings: [],
            current=lambda event, settings: None,
            remote_activity=self.remote_activity,
        )

    def remote_activity(
        self, current: Session, settings: Settings, deadline: float, commit: bool
    ) -> list[SessionActivity]:
        self.asked.append(commit)
        far = Session(
            key="remote:1",
            name="far-away",
            path=Path("/nowhere.jsonl"),
            format="pi",
            group="g",
            resolver="remote-test",
        )
        return [SessionActivity(session=far, user_messages=1, first_user_text="on another machine")]


def test_a_fleet_is_read_once_per_prompt_and_never_committed_by_a_dry_run(world: HookWorld) -> None:
    remote = RemoteSiblings()
    plugins = Plugins(entry_points=False)
    plugins.register(remote, name="remote-test")
    assert prompt(world, 0) is not None  # the first look (no remote plugin yet)
    out = context_of(handle_hook("claude-code", world.payload(0), plugins=plugins))
    assert out is not None and "on another machine" in out
    assert remote.asked == [True]  # asked once, and it committed as it read: the digest went out
    remote.asked.clear()
    event = HostEvent(
        host="claude-code",
        event="UserPromptSubmit",
        session_id=session_id(0),
        transcript_path=world.transcript(0),
    )
    plan = plan_event(event, Settings.load(), plugins)
    assert "on another machine" in (plan.text or "")
    assert remote.asked == [False]  # a dry run reads without committing, and applies nothing
