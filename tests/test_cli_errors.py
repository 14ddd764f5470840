"""Guarantee 5 (issue 7): every command, given bad input, prints one line that says what is wrong and
what to do, exits non-zero, and changes nothing.

Each case runs the real CLI in a throwaway HOME that holds one good Claude Code session (so "no such
session" is about the name, not an empty machine), a directory, a binary file and a non-transcript
text file; afterwards nothing under HOME may have changed but the state directory's lock files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_CODE, jsonl

DATA = Path(__file__).parent / "data"

# (arguments, words the one line must contain); {bin}, {dir}, {text} and {missing} are filled in.
CASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("scan", "{missing}"), ("no such file",)),
    (("scan", "{dir}"), ("no transcripts (*.jsonl) under this folder",)),
    (("scan", "-"), ("-: cannot detect the format",)),  # standard input, empty here
    (("scan", "{bin}"), ("cannot detect the format", "--format")),
    (("scan", "--format", "nope", "{bin}"), ("unknown format",)),
    (("scan", "--no-such-option", "{text}"), ("unrecognized arguments",)),
    (("scan", "--format", "codex", "{pi}"), ("reads as pi, not codex", "--format pi")),
    (("read", "no-such-session"), ("no session matches",)),
    (("read", "{missing}"), ("no such file",)),
    (("read", "{bin}"), ("cannot detect the format",)),
    (("read", "{text}"), ("cannot detect the format",)),
    (("read", "x", "--lines", "0"), ("--lines", "at least 1")),
    (("context", "no-such-session"), ("no session matches",)),
    (("context", "x", "--event", "end"), ("--event", "invalid choice")),
    (("context", "x", "--source", "resume"), ("--source goes with --event start",)),
    (("history", "no-such-session"), ("no session matches",)),
    (("history", "{bin}"), ("cannot detect the format",)),
    (("history", "x", "--max-messages", "0"), ("--max-messages", "at least 1")),
    (("history", "x", "--max-tokens", "-5"), ("--max-tokens",)),
    (("recap", "no-such-session"), ("no session matches",)),
    (("recap", "{bin}"), ("cannot detect the format", "--format", "claude-code")),
    (("recap", "x", "--budget", "0"), ("--budget", "at least 1")),
    (("suspend", "no-such-session"), ("no session matches",)),
    (("resume", "no-such-session"), ("no session matches",)),
    (("remember", ""), ("TEXT is empty",)),
    (("forget", "no-such-fact"), ("no fact", "sidelight facts")),
    (("facts", "--scope", "nope"), ("invalid choice",)),
    (("install", "nohost"), ("invalid choice",)),
    (("uninstall", "nohost"), ("invalid choice",)),
    (
        ("install", "codex", "--scope", "project"),
        ("--scope project applies to", "codex is set up for the user"),
    ),
    (("uninstall", "pi", "--scope", "project"), ("--scope project applies to",)),
    (("install", "pi", "--dir", "{dir}"), ("--dir applies to skill only",)),
    (("uninstall", "copilot", "--dir", "{dir}"), ("--dir applies to skill only",)),
    (("watch", "--idle-timeout", "soon"), ("not a duration",)),
    (("watch", "--max-duration", "0s"), ("more than zero",)),
    (("no-such-command",), ("unknown command 'no-such-command'",)),
    # --format on every command that reads a transcript, the same choices (issue 21).
    (("read", "x", "--format", "nope"), ("--format", "unknown format 'nope'", "claude-code")),
    (("history", "x", "-f", "nope"), ("--format", "unknown format 'nope'")),
    (("recap", "x", "--format", "json"), ("--format", "unknown format 'json'")),
    (("context", "x", "--format", "nope"), ("--format", "unknown format 'nope'")),
    (("read", "{dir}"), ("is a directory without transcripts (*.jsonl)",)),
    (("dashboard", "--host", "203.0.113.7", "--no-browser"), ("cannot listen on 203.0.113.7 port 0",)),
    (
        ("dashboard", "--host", "no-such-host.invalid", "--no-browser"),
        ("cannot listen on no-such-host.invalid",),
    ),
    (("completion", "tcsh"), ("invalid choice",)),
]

#: Numbers that are not finite, out of range or huge, in options, variables and settings (issue 19):
#: each refused by the one check (sidelight.config.check_number) with exit 2, nothing started.
NUMBERS: list[tuple[tuple[str, ...], dict[str, str], tuple[str, ...]]] = [
    (("read", "x", "-n", "99999999999999999999999"), {}, ("--lines", "at most")),
    (("read", "x", "-n", "nan"), {}, ("--lines", "whole number")),
    (("read", "x"), {"SIDELIGHT_READ_LINES": "1e999"}, ("--lines", "whole number")),
    (("history", "x", "-n", "-3"), {}, ("--max-messages", "at least 1")),
    (("history", "x", "-t", "inf"), {}, ("--max-tokens", "number of tokens")),
    (("recap", "x", "-b", "1e999"), {}, ("--budget", "number of tokens")),
    (("dashboard", "--port", "70000"), {}, ("--port", "at most 65535")),
    (("dashboard",), {"SIDELIGHT_DASHBOARD_PORT": "nan"}, ("--port", "port number")),
    (("recap", "0b1c2d3e"), {"SIDELIGHT_RECAP_ALPHA": "nan"}, ("alpha", "finite")),
    (
        ("recap", "0b1c2d3e"),
        {"SIDELIGHT_RECAP_CHUNK_CHARS": "99999999999999999999999"},
        ("chunk_chars", "at most"),
    ),
    (("watch", "--idle-timeout", "nan"), {}, ("idle-timeout", "finite")),
    (("watch", "--debounce", "1e400ms"), {}, ("debounce", "finite")),
    (("watch", "--reconcile=-1s"), {}, ("reconcile", "negative")),
    (("watch",), {"SIDELIGHT_MAX_DURATION": "inf"}, ("max-duration", "finite")),
    (("watch",), {"SIDELIGHT_IDLE_TIMEOUT": "99999999999d"}, ("idle_timeout", "at most")),
    (("status", "--watch", "--interval", "inf"), {}, ("--interval", "finite")),
    (("status", "--watch", "--interval", "0"), {}, ("--interval", "more than zero")),
    (("status", "--watch", "--interval", "-1"), {}, ("--interval", "negative")),
    (("sessions",), {"SIDELIGHT_TIME_BUDGET": "inf"}, ("time_budget", "finite")),
    (
        ("sessions",),
        {"SIDELIGHT_FIRST_LOOK_BYTES": "99999999999999999999999"},
        ("first_look_bytes", "at most"),
    ),
    (("context", "x"), {"SIDELIGHT_PROMPT_BUDGET": "nan"}, ("prompt_budget", "number of tokens")),
]


@pytest.fixture
def world(home: Path) -> dict[str, str]:
    project = home / ".claude" / "projects" / "-tmp-proj"
    project.mkdir(parents=True)
    (project / "0b1c2d3e-aaaa-4bbb-8ccc-123456789abc.jsonl").write_text(jsonl(CLAUDE_CODE))
    files = home / "files"
    (files / "a-directory.jsonl").mkdir(parents=True)
    (files / "binary.jsonl").write_bytes(b"\x00\x01\x02\xff\xfe binary \x00" * 50)
    (files / "notes.txt").write_text("just some notes\nnot a transcript\n")
    return {
        "bin": str(files / "binary.jsonl"),
        "dir": str(files / "a-directory.jsonl"),
        "text": str(files / "notes.txt"),
        "missing": str(files / "missing.jsonl"),
        "pi": str(shutil.copy(DATA / "pi" / "four-tools-continue.jsonl", files / "pi.jsonl")),
    }


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time, but lock files (taking a lock
    creates one) and the hooks' log."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.name.endswith(".lock"):
            stat = path.stat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.parametrize(("args", "words"), CASES, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_bad_input_gets_one_clear_line_and_changes_nothing(home, world, run_cli, args, words):
    argv = [a.format(**world) for a in args]
    before = snapshot(home)
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    done = run_cli(*argv, env=env)
    assert done.returncode != 0, (argv, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert done.stdout == ""
    assert snapshot(home) == before, "a failing command changed files"


@pytest.mark.parametrize(
    ("args", "variables", "words"), NUMBERS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_a_number_that_is_not_finite_or_in_range_is_refused(home, world, run_cli, args, variables, words):
    before = snapshot(home)
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), **variables}
    done = run_cli(*args, env=env)
    assert done.returncode == 2, (args, variables, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert done.stdout == ""
    assert snapshot(home) == before, "a refused command changed files"


def test_the_cases_cover_every_command(run_cli):
    from sidelight.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands is not None
    covered = {args[0] for args, _words in CASES}
    # The rest take no argument that can be wrong in the ways above, or never fail by design (a hook
    # stays silent for its host, whatever it is given: tests/test_hook_faults.py).
    without = {"sessions", "plugins", "status", "hook", "mcp"}
    assert set(commands) - covered - without == set(), sorted(set(commands) - covered - without)
    assert os.environ.get("HOME")  # the suite runs in a HOME of its own (conftest)


def test_plugins_named_but_not_installed_are_said_once(home, run_cli):
    """SIDELIGHT_PLUGINS=nosuch is one warning line naming it, not ignored silently (issue 21)."""
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), "SIDELIGHT_PLUGINS": "nosuch"}
    done = run_cli("sessions", env=env)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "SIDELIGHT_PLUGINS" in line]
    assert len(said) == 1 and "names nosuch, which no installed plugin provides" in said[0], done.stderr


def test_a_forced_format_that_matches_is_not_refused(world, run_cli):
    done = run_cli("scan", "--format", "pi", world["pi"])
    assert done.returncode == 0, done.stderr
    assert "format      pi" in done.stdout


@pytest.mark.parametrize("command", ["read", "history", "recap", "context", "scan"])
def test_an_unknown_format_in_the_environment_is_a_usage_error(home, world, run_cli, command):
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), "SIDELIGHT_FORMAT": "nope"}
    done = run_cli(command, world["text"], env=env)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "--format" in line and "unknown format 'nope'" in line


#: What issue 21 found unchecked: (arguments, environment, exit code, words of the one line). {bin},
#: {text}, {pi} are filled in as above. Each passed silently before (or did something else): an empty
#: fact was exit 1 like a failure, a path that is no transcript was "suspended", an on/off variable with
#: another word was off, a file as --dir failed only when written.
VALIDATIONS: list[tuple[tuple[str, ...], dict[str, str], int, tuple[str, ...]]] = [
    (("remember", "   "), {}, 2, ("TEXT is empty",)),
    (("forget", ""), {}, 2, ("FACT is empty",)),
    (("suspend", "{bin}"), {}, 1, ("not a transcript",)),
    (("suspend", "{text}"), {}, 1, ("not a transcript",)),
    (("resume", "{pi}"), {}, 1, ("no session the watcher follows",)),
    (("install", "skill", "--dir", "{text}"), {}, 2, ("--dir", "not a folder")),
    (("install", "skill"), {"SIDELIGHT_INSTALL_SCOPE": "everywhere"}, 2, ("SIDELIGHT_INSTALL_SCOPE",)),
    (("scan", "{pi}"), {"SIDELIGHT_JSON": "maybe"}, 2, ("SIDELIGHT_JSON=maybe", "1 or 0")),
    (("watch",), {"SIDELIGHT_POLLING": "maybe"}, 2, ("polling", "true or false")),
    (("watch",), {"SIDELIGHT_ARCHIVE_TRANSCRIPTS": "gzip"}, 2, ("archive-transcripts",)),
    (("watch",), {"SIDELIGHT_WARM": "sometimes"}, 2, ("SIDELIGHT_WARM=sometimes",)),
    (("--color", "sometimes", "sessions"), {}, 2, ("--color", "invalid choice")),
    (("sessions", "--color", "rainbow"), {}, 2, ("--color", "invalid choice")),
]


@pytest.mark.parametrize(
    ("args", "variables", "code", "words"),
    VALIDATIONS,
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_each_option_and_variable_is_checked(home, world, args, variables, code, words):
    import subprocess

    from tests.conftest import cli_command

    argv = [a.format(**world) for a in args]
    before = snapshot(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), **variables)
    try:  # a watch that took the bad value runs until stopped: that hang is the failure
        done = subprocess.run(
            [*cli_command(), *argv], capture_output=True, text=True, env=env, timeout=30, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv} {variables} was taken and ran on")
    assert done.returncode == code, (argv, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert done.stdout == ""
    assert snapshot(home) == before, "a refused command changed files"
