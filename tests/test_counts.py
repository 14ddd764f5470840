"""One set of counts per session, whichever command asks (issue 21): ``status`` without a watcher, the
watcher's snapshot, ``scan``, ``sessions`` and the digest give the same messages and tool uses by
category for each session of every agent, on the real CLIs' samples placed where each agent keeps them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import SessionActivity, SummarizerSpec
from tests.conftest import wait_for

DATA = Path(__file__).parent / "data"
CATEGORIES = ("edit", "read", "command", "other")

#: Each sample, and where its agent keeps it (under HOME).
PLACES = {
    "claude-code/four-tools-resume.jsonl": ".claude/projects/-tmp-sidelight-samples-claude-code-project/"
    "efe363b5-b821-4830-99c4-b4c7fff4e274.jsonl",
    "claude-code/subagent.jsonl": ".claude/projects/-tmp-sidelight-samples-claude-code-subagent-project/"
    "d2f0fe18-9b2c-4094-9aca-781b3ce981be.jsonl",
    "codex/four-tools-resume.jsonl": ".codex/sessions/2026/11/21/"
    "rollout-2026-11-21T21-20-32-01a1fffb-7517-7871-9b38-b9b39d5b1d71.jsonl",
    "pi/four-tools-continue.jsonl": ".pi/agent/sessions/--tmp-sidelight-samples-pi-project--/"
    "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl",
    "qwen/four-tools-resume.jsonl": ".qwen/projects/-tmp-sidelight-samples-qwen-project/chats/"
    "46fd219f-6bf7-48f8-8df1-c2bbca99394b.jsonl",
    "copilot/four-tools-resume.jsonl": ".copilot/session-state/8ed2d4e8-0d21-4f05-bfa3-98490ef6f892/"
    "events.jsonl",
    "gemini/four-tools-resume.jsonl": ".gemini/tmp/project/chats/session-2026-11-25T05-49-6803eb87.jsonl",
    "droid/four-tools-resume.jsonl": ".factory/sessions/-tmp-sidelight-samples-droid-project/"
    "e9399b42-0e12-466c-9529-4d3b84cf3d5b.jsonl",
    "kimi/four-tools-resume.jsonl": ".kimi/sessions/882933f0a474eab5ab255a33cae246b3/"
    "6cb094a2-8125-43f6-9cd5-aa6ae9ee3050/wire.jsonl",
}
SUBAGENTS = ".claude/projects/-tmp-sidelight-samples-claude-code-subagent-project/"
SUBAGENTS += "d2f0fe18-9b2c-4094-9aca-781b3ce981be/subagents"


def place_samples(home: Path) -> None:
    """Every agent's sample where that agent writes it; opencode's as its database."""
    for sample, place in PLACES.items():
        target = home / place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / sample, target)
    shutil.copytree(DATA / "claude-code" / "subagent" / "subagents", home / SUBAGENTS)
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as connection:
        connection.executescript((DATA / "opencode" / "opencode.sql").read_text())
    connection.close()


Counts = tuple[int, int, dict[str, int]]


def counts(user: int, assistant: int, categories: Any) -> Counts:
    return (int(user), int(assistant), {c: int(categories.get(c) or 0) for c in CATEGORIES})


@pytest.fixture
def world(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    place_samples(home)
    return home


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def scanned(run_cli: Any, paths: list[str]) -> Counts:
    """What ``sidelight scan`` counts in a session's transcripts, summed."""
    done = run_cli("scan", "--json", *paths)
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    assert len(records) == len(paths)
    user = sum(r["messages"]["user"] for r in records)
    assistant = sum(r["messages"]["assistant"] for r in records)
    return counts(user, assistant, {c: sum(r["categories"][c] for r in records) for c in CATEGORIES})


class _Capture:
    """A summarizer that keeps what the digest counted for each sibling (and says nothing)."""

    def __init__(self) -> None:
        self.seen: dict[str, SessionActivity] = {}

    @hookimpl
    def sidelight_summarizers(self) -> Any:
        def keep(activity: SessionActivity) -> None:
            self.seen[activity.session.key] = activity

        yield SummarizerSpec(name="capture", summarize=keep)


def test_every_command_gives_one_set_of_counts_per_session(world: Path, run_cli, monkeypatch) -> None:
    from sidelight.features.digest import get_session_updates
    from sidelight.watch.watcher import Watcher, read_snapshot

    listed = json_lines(run_cli("sessions", "--json").stdout)
    assert {r["format"] for r in listed} == {
        "claude-code",
        "codex",
        "pi",
        "qwen",
        "copilot",
        "gemini",
        "opencode",
        "droid",
        "kimi",
    }
    by_key = {r["key"]: r for r in listed}

    # scan: the session's main transcript and its subagent files, as the session counts them.
    expected: dict[str, Counts] = {}
    for record in listed:
        paths = [record["path"], *record.get("subagent_paths", [])]
        expected[record["key"]] = scanned(run_cli, paths)
    sub = next(k for k, r in by_key.items() if r["subagents"])
    assert expected[sub][1] == 4  # the parent's 2 replies and the subagent's 2: the subagent is counted
    assert all(sum(c[2].values()) for c in expected.values())  # every agent's sample was read

    # sessions: its counts are the same.
    assert {
        r["key"]: counts(r["user_messages"], r["assistant_messages"], r["categories"]) for r in listed
    } == expected

    # status without a watcher.
    status = json_lines(run_cli("status", "--json").stdout)
    assert {r["source"] for r in status} == {"transcripts"}
    rows = {r["key"]: r for r in status}
    assert {
        k: counts(r["user_messages"], r["assistant_messages"], r["categories"]) for k, r in rows.items()
    } == expected
    assert all(rows[k]["messages"] == sum(expected[k][:2]) for k in rows)

    # The digest, on a first look that covers the whole transcripts (the totals it would report).
    monkeypatch.setenv("SIDELIGHT_SCOPE", "all")
    monkeypatch.setenv("SIDELIGHT_FIRST_LOOK_BYTES", str(64 * 1024 * 1024))
    reader = world / ".claude" / "projects" / "-tmp-reader" / "00000000-0000-4000-8000-000000000001.jsonl"
    reader.parent.mkdir(parents=True)
    reader.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    settings = Settings.load()
    plugins = Plugins(entry_points=False)
    capture = _Capture()
    plugins.register(capture, name="capture")
    get_session_updates(str(reader), settings=settings, plugins=plugins, commit=False)
    digest = {
        key: counts(a.user_messages, a.assistant_messages, a.categories) for key, a in capture.seen.items()
    }
    assert digest == expected

    # The watcher's status.json, and `status` and `sessions` while it runs.
    monkeypatch.delenv("SIDELIGHT_FIRST_LOOK_BYTES")
    watch_settings = Settings.load()
    with Watcher(watch_settings, Plugins(entry_points=False), debounce=0.02, flush_interval=0.0):

        def snapshot() -> dict[str, Counts] | None:
            found = {
                r["key"]: counts(r["user_messages"], r["assistant_messages"], r["categories"])
                for r in (read_snapshot(watch_settings) or {}).get("sessions") or ()
            }
            return found if set(expected) <= set(found) else None

        watched = wait_for(snapshot, what="every session in the watcher's snapshot")
        assert {k: watched[k] for k in expected} == expected


# -- what `sessions` shows resolves, for every agent; paths are paths; --format everywhere -------------

READING_COMMANDS = (("read", "-n", "1"), ("history",), ("recap",), ("context",))


def cli(*argv: str) -> tuple[int, str, str]:
    """The CLI in this process (``run_command``), its exit code, stdout and stderr."""
    import contextlib
    import io

    from sidelight.cli.parser import run_command

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run_command(list(argv))
        except SystemExit as exit:
            code = int(exit.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_what_sessions_shows_resolves_for_every_agent(world: Path, run_cli) -> None:
    from sidelight.engine.discovery import resolve_session

    listed = json_lines(run_cli("sessions", "--json").stdout)
    settings, plugins = Settings.load(), Plugins()
    assert len({r["format"] for r in listed}) == 9
    for record in listed:
        shown, full = record["name"], record["id"]
        for spec in (shown, shown[:4], full[:13], full[:13].upper()):
            found = resolve_session(spec, settings, plugins)
            assert found.key == record["key"], (spec, record["format"])
        for command in (*READING_COMMANDS, ("suspend",), ("resume",)):
            code, _out, err = cli(command[0], shown[:5], *command[1:])
            assert code == 0, (command, record["format"], err)


def test_an_ambiguous_prefix_lists_the_candidates(world: Path) -> None:
    # The Codex and Pi samples' UUIDv7 ids start alike (the same minute).
    code, _out, err = cli("read", "01a1")
    assert code == 1
    [line] = err.splitlines()
    assert "'01a1' matches 2 sessions" in line
    assert "9d5b1d71 (codex:" in line and "ed9e653b (pi:" in line


def test_an_existing_file_or_folder_is_a_path(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(world)
    (world / "adir").mkdir()
    shutil.copyfile(DATA / "pi" / "four-tools-continue.jsonl", world / "adir" / "older.jsonl")
    shutil.copyfile(DATA / "codex" / "four-tools-resume.jsonl", world / "adir" / "newer.jsonl")
    shutil.copyfile(DATA / "qwen" / "four-tools-resume.jsonl", world / "afile")  # no .jsonl
    import os

    os.utime(world / "adir" / "older.jsonl", (1, 1))
    code, out, err = cli("read", "adir", "-n", "2")
    assert code == 0, err
    assert "[exec_command wc -l" in out  # the newest transcript in it: Codex's
    code, out, err = cli("recap", "afile")
    assert code == 0, err
    assert out.splitlines()[0].startswith("# Recap of session qwen ")  # named by agent and id
    code, out, err = cli("read", "afile", "-n", "1")
    assert code == 0 and "It says alpha and gamma." in out, err
    # A listed session's transcript given as a path is that session (its name, its format).
    codex = next(world.glob(".codex/sessions/*/*/*/*.jsonl"))
    code, out, err = cli("recap", str(codex.relative_to(world)))
    assert code == 0 and out.splitlines()[0] == "# Recap of session codex 9d5b1d71", err
    (world / "empty").mkdir()
    code, _out, err = cli("read", "empty")
    assert code == 1
    assert err.strip() == (
        "sidelight: empty is a directory without transcripts (*.jsonl) in it: pass a transcript or a "
        "session name"
    )


def test_every_reading_command_takes_format(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(world)
    # Twenty lines that tell nothing first: the format cannot be detected, and is given.
    filler = json.dumps({"type": "progress", "data": {}}) + "\n"
    (world / "odd.jsonl").write_text(filler * 20 + (DATA / "pi" / "four-tools-continue.jsonl").read_text())
    code, _out, err = cli("read", "odd.jsonl")
    assert code == 1 and "pass --format" in err
    said = {
        "read": "It says alpha and gamma.",
        "history": "alpha and gamma",
        "recap": "# Recap of session pi ",
        "context": "next prompt",
    }
    for command in READING_COMMANDS:
        for option in ("--format", "-f"):
            code, out, err = cli(command[0], "odd.jsonl", option, "pi", *command[1:])
            assert code == 0, (command, err)
            assert said.get(command[0], "odd") in out, (command, out)
