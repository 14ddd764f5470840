"""The awareness hot path (`sidelight.features.digest`, `sidelight.engine.discovery`,
`sidelight.engine.reads`): siblings, cursors,
first looks, resets, the budget.

Sessions come from a fake resolver over real Claude-Code-shaped transcripts in a throwaway folder, so
these tests pin the orchestration; the real resolvers and hosts have their own tests.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

import sidelight._core as _core
from sidelight.config import Settings
from sidelight.cursors import CursorStore
from sidelight.engine import reads
from sidelight.engine.discovery import siblings_of
from sidelight.engine.reads import cursor_file
from sidelight.features.digest import CARRIED_OVER, get_session_updates
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import FormatSpec, HostEvent, ResolverSpec, Session
from tests.support.hook_world import HookWorld, session_id

NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z
STAMP = "2027-01-15T07:57:00.000Z"  # three minutes before NOW


def prompt(text: str, stamp: str = STAMP) -> str:
    entry = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "timestamp": stamp,
        "sessionId": "s",
    }
    return json.dumps(entry) + "\n"


def tool(name: str, argument: dict[str, str], n: int, stamp: str = STAMP) -> str:
    block = {"type": "tool_use", "id": f"tu{n}", "name": name, "input": argument}
    entry = {
        "type": "assistant",
        "message": {"id": f"m{n}", "role": "assistant", "content": [block]},
        "timestamp": stamp,
    }
    return json.dumps(entry) + "\n"


def reply(text: str, n: int, stamp: str = STAMP) -> str:
    block = {"type": "text", "text": text}
    entry = {
        "type": "assistant",
        "message": {"id": f"r{n}", "role": "assistant", "content": [block]},
        "timestamp": stamp,
    }
    return json.dumps(entry) + "\n"


def append(path: Path, *lines: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.writelines(lines)


class FakeHost:
    """A resolver plugin over a fixed list of sessions; the current one is found by session id."""

    def __init__(self, sessions: list[Session]) -> None:
        self.sessions = sessions

    @hookimpl
    def sidelight_formats(self):
        yield FormatSpec(
            name="claude-code", decoder="claude-code", categories=DEFAULT_CATEGORIES["claude-code"]
        )

    @hookimpl
    def sidelight_resolvers(self):
        def current(event: HostEvent, settings: Settings) -> Session | None:
            return next((s for s in self.sessions if s.id == event.session_id), None)

        yield ResolverSpec(name="fake", list_sessions=lambda settings: list(self.sessions), current=current)


def session(root: Path, name: str, group: str = "proj", extra_paths: tuple[Path, ...] = ()) -> Session:
    path = root / f"{name}.jsonl"
    path.touch()
    return Session(
        key=f"fake:{name}",
        name=name,
        path=path,
        format="claude-code",
        group=group,
        resolver="fake",
        id=name,
        extra_paths=extra_paths,
    )


@pytest.fixture
def world(tmp_path: Path):
    root = tmp_path / "sessions"
    root.mkdir()
    sessions = [
        session(root, "main"),
        session(root, "discord"),
        session(root, "email"),
        session(root, "other", "elsewhere"),
    ]
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost(sessions), name="fake-host")
    settings = replace(
        Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state", first_look_bytes=4096
    )
    by_name = {s.name: s for s in sessions}

    def updates(reader: str = "main", settings: Settings = settings) -> str | None:
        return get_session_updates(reader, settings=settings, plugins=plugins, now=NOW)

    return by_name, updates, settings


def test_a_sibling_with_news_is_reported_once(world) -> None:
    sessions, updates, _ = world
    append(
        sessions["discord"].path,
        prompt("how do I deploy this?"),
        tool("Bash", {"command": "make deploy"}, 1),
        tool("Edit", {"file_path": "/p/deploy.sh"}, 2),
        reply("Deployed.", 3),
    )
    digest = updates()
    assert digest is not None
    assert "[Session Activity]" in digest
    assert "discord" in digest and "3m ago" in digest
    assert "how do I deploy this?" in digest
    assert "-> edited /p/deploy.sh; ran make deploy" in digest
    assert "other" not in digest.split("]", 1)[1].split("\n", 1)[1]  # another group is not a sibling
    assert len(digest) <= 500
    assert updates() is None  # nothing new since


def test_only_the_new_part_is_reported(world) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("first question"), tool("Bash", {"command": "ls"}, 1))
    assert "first question" in (updates() or "")
    append(sessions["discord"].path, prompt("second question"), tool("Bash", {"command": "pwd"}, 2))
    append(sessions["discord"].path, prompt("half a line")[:20])  # still being written
    digest = updates() or ""
    assert "second question" in digest and "first question" not in digest
    assert "ran pwd" in digest and "ls" not in digest
    append(sessions["discord"].path, prompt("half a line")[20:])
    assert "half a line" in (updates() or "")


def test_a_sibling_left_out_for_room_is_reported_with_the_next_prompt(tmp_path: Path) -> None:
    # Seven agents in one project: the digest names four or five and counts the rest ("+1 more
    # session"). The rest were marked as read all the same, so Codex's `wrote notes.md` never reached
    # the Claude Code session at all.
    root = tmp_path / "sessions"
    root.mkdir()
    sessions = [session(root, name) for name in ("main", "codex", "pi", "qwen", "copilot", "gemini")]
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost(sessions), name="fake-host")
    settings = replace(Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state")
    append(
        sessions[1].path,
        prompt("list files and write notes.md " + "with care " * 10, stamp="2027-01-15T07:50:00.000Z"),
        tool("Write", {"file_path": "/p/notes.md"}, 1, stamp="2027-01-15T07:50:00.000Z"),
    )
    for n, chatty in enumerate(sessions[2:]):
        stamp = f"2027-01-15T07:5{5 + n}:00.000Z"  # each more recent than the codex session
        append(chatty.path, prompt(f"{chatty.name}: anything new? " + "tell me " * 4, stamp=stamp))

    def updates() -> str | None:
        return get_session_updates("main", settings=settings, plugins=plugins, now=NOW)

    first = updates() or ""
    assert "+1 more session" in first and "codex" not in first, first
    second = updates() or ""
    assert "- claude codex " in second and "edited /p/notes.md" in second, second
    assert "more session" not in second and "anything new" not in second, second
    assert updates() is None


def test_only_a_few_siblings_left_out_for_room_are_kept_for_later(tmp_path: Path) -> None:
    # Thirty siblings at once (a host's first prompt in a busy project): keeping every one left out
    # would report old news for the next seven prompts and re-read all of them on each. The most
    # relevant CARRIED_OVER are kept; the rest are marked read, as "+N more sessions" said.

    root = tmp_path / "sessions"
    root.mkdir()
    sessions = [session(root, "main")] + [session(root, f"s{n:02}") for n in range(30)]
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost(sessions), name="fake-host")
    settings = replace(Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state")
    for n, sibling in enumerate(sessions[1:]):
        append(
            sibling.path,
            prompt(f"{sibling.name} asks " + "at length " * 5, stamp=f"2027-01-15T07:{n:02}:00.000Z"),
        )
    digests = []
    while (digest := get_session_updates("main", settings=settings, plugins=plugins, now=NOW)) is not None:
        digests.append(digest)
        assert len(digests) < 10, digests
    named = [line.split()[2] for d in digests for line in d.splitlines() if line.startswith("- claude ")]
    assert len(named) == len(set(named)), named  # never one twice
    first = len([line for line in digests[0].splitlines() if line.startswith("- ")])
    assert len(named) == first + CARRIED_OVER, (first, named)
    # The most recent siblings are the ones named, first and later.
    assert sorted(named, reverse=True) == sorted(f"s{n:02}" for n in range(30 - len(named), 30))[::-1]


def test_siblings_busier_than_a_digest_holds_take_turns(tmp_path: Path) -> None:
    # Ten siblings with news at every prompt and room for about four: the six left out wait, and the
    # next prompt names them first, rather than the four most recent again (the same six were never
    # named, their pending news re-read and growing at every prompt).
    root = tmp_path / "sessions"
    root.mkdir()
    siblings = [session(root, f"s{n}") for n in range(10)]
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost([session(root, "main"), *siblings]), name="fake-host")
    settings = replace(Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state")
    assert get_session_updates("main", settings=settings, plugins=plugins, now=NOW) is None  # cursors at 0
    named: list[set[str]] = []
    for turn in range(3):
        for n, sibling in enumerate(siblings):  # the later, the more recent
            stamp = f"2027-01-15T07:{10 * turn + n:02}:00.000Z"
            append(sibling.path, prompt(f"{sibling.name} round {turn} " + "at length " * 4, stamp=stamp))
        digest = get_session_updates("main", settings=settings, plugins=plugins, now=NOW) or ""
        assert "more session" in digest, digest  # more news than room, every time
        named.append({line.split()[2] for line in digest.splitlines() if line.startswith("- ")})
    assert named[0] and named[1] and not named[0] & named[1], named  # the second prompt: the others
    assert set().union(*named) == {s.name for s in siblings}, named  # everyone in three prompts


def test_each_reader_has_its_own_cursors(world) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("news for everyone"))
    assert "news for everyone" in (updates("main") or "")
    assert "news for everyone" in (updates("email") or "")
    assert updates("main") is None


def test_the_first_look_reads_only_a_recent_tail(world) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("ancient history"))
    append(sessions["discord"].path, *(reply("x" * 200, n) for n in range(100)))  # ~30 KB, > first_look_bytes
    append(sessions["discord"].path, prompt("what happened lately"))
    digest = updates() or ""
    assert "what happened lately" in digest
    assert "ancient history" not in digest


def test_the_default_first_look_holds_a_real_claude_code_session_s_first_turn(world, tmp_path: Path) -> None:
    # Claude Code 2.1.330 writes ~140 KB of attachments and request shapes after a session's first
    # prompt: in a real run, a 64 KiB first look began after the prompt and its edit, and the digest said
    # only `ran python3 test_app.py`. The sample's two turns are 167 KB; its first prompt, its first
    # command (`ls -la`) and its edit lie more than 64 KiB from its end.
    sessions, updates, settings = world
    sample = Path(__file__).parent / "data" / "claude-code" / "four-tools-resume.jsonl"
    sessions["discord"].path.write_bytes(sample.read_bytes())
    default = Settings.load(env={}, home=tmp_path).first_look_bytes
    digest = updates(settings=replace(settings, first_look_bytes=default)) or ""
    (line,) = [line for line in digest.splitlines() if line.startswith("- claude discord ")]
    assert '"Create notes.txt with two lines, then change beta to gamma' in line, digest
    assert "9 messages" in line and "edited notes.txt" in line and "(+1)" in line, digest


def test_a_rewritten_sibling_is_read_like_a_first_look(world) -> None:
    sessions, updates, _ = world
    path = sessions["discord"].path
    append(path, prompt("before"))
    assert updates() is not None
    path.write_text(
        prompt("ancient rewritten history")
        + "".join(reply("y" * 200, n) for n in range(60))
        + prompt("fresh")
    )
    digest = updates() or ""
    assert "fresh" in digest and "ancient rewritten history" not in digest


def test_seed_shaped_cursors_are_honoured(world) -> None:
    sessions, updates, settings = world
    append(sessions["discord"].path, prompt("already seen"))
    offset = sessions["discord"].path.stat().st_size
    append(sessions["email"].path, prompt("already seen too"))
    store = CursorStore(cursor_file(sessions["main"], settings))
    store.update("fake:main", {"fake:discord": {"offset": offset}, "fake:email": {"offset": 10**9}})
    append(sessions["discord"].path, prompt("new since the seed"))
    digest = updates() or ""
    assert "new since the seed" in digest and "already seen" not in digest
    assert "email" not in digest  # an offset past the end is a reset: read like a first look, nothing new


def test_subagent_files_count_toward_their_session(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    sub = root / "worker-subagent.jsonl"
    sub.touch()
    main = session(root, "main")
    worker = session(root, "worker", extra_paths=(sub,))
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost([main, worker]), name="fake-host")
    settings = replace(Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state")
    assert get_session_updates("main", settings=settings, plugins=plugins, now=NOW) is None
    append(worker.path, prompt("refactor the parser"))
    append(sub, tool("Edit", {"file_path": "/p/a.py"}, 1), tool("Edit", {"file_path": "/p/b.py"}, 2))
    digest = get_session_updates("main", settings=settings, plugins=plugins, now=NOW) or ""
    assert "worker" in digest and "refactor the parser" in digest and "edited /p/b.py, /p/a.py" in digest


def test_scope_widens_and_narrows_the_siblings(world) -> None:
    sessions, updates, settings = world
    main = sessions["main"]
    everyone = list(sessions.values())
    assert {s.name for s in siblings_of(main, everyone, "project")} == {"discord", "email"}
    assert {s.name for s in siblings_of(main, everyone, "all")} == {"discord", "email", "other"}
    assert {s.name for s in siblings_of(main, everyone, frozenset({"other"}))} == {"other"}
    append(sessions["other"].path, prompt("from another project"))
    assert updates() is None
    assert "another project" in (updates(settings=replace(settings, scope="all")) or "")


def test_a_spent_budget_injects_nothing_and_keeps_the_cursors(world) -> None:
    sessions, updates, settings = world
    append(sessions["discord"].path, prompt("slow news"))
    assert updates(settings=replace(settings, time_budget=0.0)) is None
    assert "slow news" in (updates() or "")  # not lost: the next prompt reports it


def test_an_unknown_session_gets_nothing(world) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("news"))
    assert updates("nobody") is None


def test_a_vanished_sibling_is_skipped(world) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("here"))
    append(sessions["email"].path, prompt("also here"))
    assert updates() is not None
    sessions["email"].path.unlink()
    append(sessions["discord"].path, prompt("still here"))
    digest = updates() or ""
    assert "still here" in digest and "email" not in digest


def test_a_digest_survives_cursors_that_cannot_be_saved(world) -> None:
    sessions, updates, settings = world
    blocked = replace(settings, state_dir=settings.state_dir / "not-a-dir")
    blocked.state_dir.parent.mkdir(parents=True, exist_ok=True)
    blocked.state_dir.write_text("a file where the state directory should be")
    append(sessions["discord"].path, prompt("news that cannot be marked read"))
    assert "news that cannot be marked read" in (updates(settings=blocked) or "")
    assert "news that cannot be marked read" in (updates(settings=blocked) or "")  # reported again


# -- conflicts first: the reader's own files (issue 17) ----------------------------------------------------

EARLIER = "2027-01-15T07:50:00.000Z"  # ten minutes before NOW
LATER = "2027-01-15T07:59:00.000Z"  # one minute before NOW


def test_a_sibling_that_changed_a_file_the_reader_touched_comes_first(world) -> None:
    sessions, updates, settings = world
    append(
        sessions["main"].path,
        prompt("work on the app"),
        tool("Edit", {"file_path": "/p/app.py"}, 1),
        tool("Read", {"file_path": "/p/README.md"}, 2),
    )
    append(
        sessions["discord"].path,
        prompt("unrelated", LATER),
        tool("Edit", {"file_path": "/p/other.py"}, 3, LATER),
    )
    append(
        sessions["email"].path,
        prompt("also the app", EARLIER),
        tool("Edit", {"file_path": "/p/app.py"}, 4, EARLIER),
        tool("Write", {"file_path": "/p/README.md", "content": "x\n"}, 5, EARLIER),
        tool("Edit", {"file_path": "/p/app.py"}, 6, EARLIER),
    )
    digest = updates() or ""
    rows = digest.splitlines()[1:]
    assert len(rows) == 2, digest
    # The older sibling goes first: it changed the file the reader edited and the one it read.
    assert rows[0].startswith(
        "- claude email (10m ago, 4 messages) [also touched by you: /p/app.py, /p/README.md]"
    )
    assert "-> edited /p/app.py, /p/README.md" in rows[0]
    assert rows[1].startswith("- claude discord (1m ago") and "touched by you" not in rows[1]
    # The reader's own entry remembers what it touched, with its own cursor.
    own = CursorStore(cursor_file(sessions["main"], settings)).read("fake:main")["fake:main"]
    assert own["offset"] == sessions["main"].path.stat().st_size
    assert own["files"] == ["/p/app.py", "/p/README.md"]


def test_the_reader_remembers_its_files_and_reads_only_its_new_lines(world) -> None:
    sessions, updates, settings = world
    main, discord = sessions["main"].path, sessions["discord"].path
    append(main, prompt("edit the parser"), tool("Edit", {"file_path": "/p/parser.py"}, 1))
    append(discord, prompt("hello"))
    assert "touched by you" not in (updates() or "")
    # The reader goes on (far less than its catch-up bound); its earlier edit is still remembered.
    append(main, *(reply("z" * 200, n) for n in range(10, 40)), tool("Edit", {"file_path": "/p/lexer.py"}, 2))
    append(discord, prompt("touch the parser", LATER), tool("Edit", {"file_path": "/p/parser.py"}, 3, LATER))
    digest = updates() or ""
    assert "[also touched by you: /p/parser.py]" in digest, digest
    append(discord, prompt("and the lexer", LATER), tool("Edit", {"file_path": "/p/lexer.py"}, 4, LATER))
    assert "[also touched by you: /p/lexer.py]" in (updates() or "")
    own = CursorStore(cursor_file(sessions["main"], settings)).read("fake:main")["fake:main"]
    assert own["files"] == ["/p/parser.py", "/p/lexer.py"]


def test_a_reader_far_behind_reads_only_its_recent_tail(world) -> None:
    sessions, updates, _ = world
    main, discord = sessions["main"].path, sessions["discord"].path
    append(main, prompt("start"))
    append(discord, prompt("hello"))
    assert updates() is not None
    # Far more than OWN_CATCH_UP_LOOKS first looks (4 x 4 KiB here) behind: the old edit is not read.
    append(main, tool("Edit", {"file_path": "/p/old.py"}, 1), *(reply("z" * 200, n) for n in range(10, 200)))
    append(main, tool("Edit", {"file_path": "/p/new.py"}, 2))
    append(discord, tool("Edit", {"file_path": "/p/old.py"}, 3), tool("Edit", {"file_path": "/p/new.py"}, 4))
    digest = updates() or ""
    assert "[also touched by you: /p/new.py]" in digest, digest


def test_the_reader_reads_itself_only_when_a_sibling_has_news(world) -> None:
    sessions, updates, settings = world
    store = CursorStore(cursor_file(sessions["main"], settings))
    append(sessions["main"].path, prompt("alone"), tool("Edit", {"file_path": "/p/a.py"}, 1))
    assert updates() is None  # the first looks at the (empty) siblings, and at itself
    before = store.read("fake:main")["fake:main"]
    append(sessions["main"].path, tool("Edit", {"file_path": "/p/b.py"}, 2))
    assert updates() is None  # no sibling has news: one stat each, its own transcript is not read
    assert store.read("fake:main")["fake:main"] == before
    append(sessions["discord"].path, tool("Edit", {"file_path": "/p/b.py"}, 3))
    assert "[also touched by you: /p/b.py]" in (updates() or "")
    assert store.read("fake:main")["fake:main"]["files"] == ["/p/a.py", "/p/b.py"]


def test_a_sibling_in_another_project_is_never_a_conflict(world) -> None:
    sessions, updates, settings = world
    append(sessions["main"].path, prompt("edit"), tool("Edit", {"file_path": "/p/app.py"}, 1))
    append(sessions["other"].path, prompt("elsewhere"), tool("Edit", {"file_path": "/p/app.py"}, 2))
    assert updates() is None  # not a sibling under the default scope, shared file or not
    wide = updates(settings=replace(settings, scope="all")) or ""
    assert "- claude other" in wide and "[also touched by you: /p/app.py]" in wide


def test_relative_paths_are_compared_against_each_session_s_directory(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    main = replace(session(root, "main"), group="/w/proj")
    pi = replace(session(root, "pi-one"), group="/w/proj")
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost([main, pi]), name="fake-host")
    settings = replace(Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state")
    append(main.path, prompt("go"), tool("Edit", {"file_path": "/w/proj/src/app.py"}, 1))
    append(
        pi.path,
        prompt("also"),
        tool("Edit", {"file_path": "src/app.py"}, 2),
        tool("Edit", {"file_path": "/etc/hosts"}, 3),
    )
    digest = get_session_updates("main", settings=settings, plugins=plugins, now=NOW) or ""
    assert "[also touched by you: src/app.py]" in digest, digest
    assert "-> edited /etc/hosts, src/app.py" in digest, digest


# -- the budget covers the whole hook, and a backlog drains (issue 19 item 3) ----------------------------


class SlowCore:
    """``sidelight._core`` whose batch scans take ``per_read`` seconds a transcript: a machine too slow
    to read a whole backlog within one prompt's budget."""

    def __init__(self, per_read: float) -> None:
        self.per_read = per_read

    def __getattr__(self, name: str) -> object:
        return getattr(_core, name)

    def scan_many(self, requests, *args, **options):
        time.sleep(self.per_read * len(requests))
        return _core.scan_many(requests, *args, **options)


def test_a_backlog_larger_than_one_budget_drains_over_successive_prompts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty siblings with news and a budget that reads only part of them: each prompt reports what it
    read in time and saves its cursors, the rest wait, and within a few prompts every sibling was named
    exactly once (one only counted in "+N more sessions" waits too, for a prompt with room for it, unless
    more than digest.CARRIED_OVER were left out: those beyond are marked read as counted)."""
    root = tmp_path / "sessions"
    root.mkdir()
    siblings = [session(root, f"s{n:02d}") for n in range(40)]
    main = session(root, "main")
    plugins = Plugins(builtins=("sidelight.templates.default",), entry_points=False)
    plugins.register(FakeHost([main, *siblings]), name="fake-host")
    settings = replace(
        Settings.load(env={}, home=tmp_path), state_dir=tmp_path / "state", first_look_bytes=4096
    )
    assert get_session_updates("main", settings=settings, plugins=plugins, now=NOW) is None  # cursors at 0
    for n, sibling in enumerate(siblings):
        append(sibling.path, prompt(f"news {n}"))
    monkeypatch.setattr(reads, "_core", SlowCore(0.01))
    budget = replace(settings, time_budget=0.3)  # about thirty reads of 0.01 s, of 41
    named: list[str] = []
    counted = marked_read = 0
    for _ in range(20):
        digest = get_session_updates("main", settings=budget, plugins=plugins, now=NOW)
        for line in (digest or "").splitlines()[1:]:
            more = re.fullmatch(r"\+(\d+) more sessions?", line)
            if more:
                counted += int(more[1])
                marked_read += max(0, int(more[1]) - CARRIED_OVER)  # beyond those kept for later
            else:
                named.append(line.split()[2])  # - claude s07 (3m ago, ...
        store = CursorStore(cursor_file(main, settings)).read("fake:main")
        if all(store.get(s.key, {}).get("offset") == s.path.stat().st_size for s in siblings):
            break
    assert len(named) == len(set(named)) and set(named) <= {s.name for s in siblings}
    assert len(named) + marked_read == len(siblings)  # each named once, or counted and marked read
    assert counted > 0  # the first digests had no room for all
    assert get_session_updates("main", settings=settings, plugins=plugins, now=NOW) is None


def test_a_sibling_too_far_behind_is_read_from_its_tail_and_says_so(world, monkeypatch) -> None:
    sessions, updates, _ = world
    append(sessions["discord"].path, prompt("seen"))
    assert updates() is not None
    monkeypatch.setattr(reads, "CATCH_UP_BYTES", 20_000)
    append(sessions["discord"].path, *(prompt(f"old news {n} " + "x" * 200) for n in range(200)))
    append(sessions["discord"].path, prompt("fresh news"))
    digest = updates() or ""
    assert "of older activity not shown" in digest and "discord" in digest
    line = next(x for x in digest.splitlines() if "discord" in x)
    assert re.search(r"\(\+\d+ KB of older activity not shown\)", line), line
    assert updates() is None  # its cursor is at the end


def test_a_10000_sibling_hook_keeps_to_its_budget_and_saves_what_it_read(tmp_path: Path) -> None:
    """A real hook over 10,000 new siblings with a 0.3 s budget: listing, first looks, scans and
    summaries are all inside the budget, so it returns (the bound below only catches a hang), having
    saved the cursors of what it read, and the next prompt goes on from there."""
    world = HookWorld(tmp_path, sessions=1)
    for n in range(1, 10_000):
        (world.folder / f"{session_id(n)}.jsonl").write_text(world.line(n, f"prompt {n}"))
    me = f"claude-code:{session_id(0)}"

    def saved() -> int:
        path = world.cursor_file(0)
        return len(CursorStore(path).read(me)) if path.exists() else 0

    counts = []
    for _ in range(2):
        started = time.monotonic()
        done = world.run_hook(0, timeout=120, SIDELIGHT_TIME_BUDGET="0.3s", SIDELIGHT_WARM="off")
        assert done.returncode == 0 and time.monotonic() - started < 60
        counts.append(saved())
    assert 0 < counts[0] < counts[1] < 10_000
