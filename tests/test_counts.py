"""One set of counts per session, whichever command asks (issue 21): ``status`` without a watcher, the
watcher's snapshot, ``scan``, ``sessions`` and the digest give the same messages and tool uses by
category for each session of every agent, on the real CLIs' samples placed where each agent keeps them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import SessionActivity, SummarizerSpec
from tests.conftest import wait_for
from tests.support.samples import place_samples

DATA = Path(__file__).parent / "data"
CATEGORIES = ("edit", "read", "command", "other")

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
