"""The command line's conventions (issue 21, item 3): every ``--json`` prints JSON lines and nothing else,
colour on a terminal only (``--color``, ``NO_COLOR``, ``FORCE_COLOR``), shell completion made from the
parser, ``suspend``/``resume`` that refuse what is no session and say a change once, and the Python
API's one error story for a transcript it cannot read."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLAUDE_CODE, cli_command, jsonl

DATA = Path(__file__).parent / "data"
ANSI = "\x1b["
SESSION_ID = "0b1c2d3e-aaaa-4bbb-8ccc-123456789abc"


@pytest.fixture
def world(home: Path) -> dict[str, Any]:
    """One Claude Code session the resolvers list, a Pi transcript outside every agent's folder, and
    the environment that points the CLI at them."""
    project = home / ".claude" / "projects" / "-tmp-proj"
    project.mkdir(parents=True)
    session = project / f"{SESSION_ID}.jsonl"
    session.write_text(jsonl(CLAUDE_CODE), encoding="utf-8")
    files = home / "files"
    files.mkdir()
    pi = Path(shutil.copy(DATA / "pi" / "four-tools-continue.jsonl", files / "pi.jsonl"))
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), "NO_COLOR": "", "FORCE_COLOR": ""}
    return {"session": session, "pi": pi, "env": env, "home": home}


def objects(stdout: str) -> list[dict[str, Any]]:
    """Every line of ``stdout`` as a JSON object: fails on anything else (a blank line, text, a list)."""
    lines = stdout.splitlines()
    assert lines, "no output"
    records = [json.loads(line) for line in lines]
    assert all(isinstance(record, dict) for record in records), stdout
    return records


# -- --json: JSON lines everywhere ---------------------------------------------------------------------


def test_every_command_that_reports_a_result_prints_json_lines(world, run_cli):
    env = world["env"]

    def run(*args: str) -> list[dict[str, Any]]:
        done = run_cli(*args, "--json", env=env)
        assert done.returncode == 0, (args, done.stderr)
        assert ANSI not in done.stdout
        return objects(done.stdout)

    [added] = run("remember", "prefers short answers")
    assert added["action"] == "remembered" and added["text"] == "prefers short answers"
    assert set(added) == {"action", "id", "text", "scope", "created", "confirmed", "confirmations"}
    [again] = run("remember", "Prefers short answers.")
    assert (again["action"], again["id"], again["confirmations"]) == ("confirmed", added["id"], 2)
    [listed] = run("facts")
    assert listed["id"] == added["id"]
    [forgot] = run("forget", added["id"])
    assert (forgot["action"], forgot["id"]) == ("forgot", added["id"])

    [suspended] = run("suspend", SESSION_ID[:8])
    assert suspended == {
        "session": suspended["session"],
        "key": f"claude-code:{SESSION_ID}",
        "state": "suspended",
        "changed": True,
        "watcher": False,
    }
    [resumed] = run("resume", SESSION_ID[:8])
    assert (resumed["state"], resumed["changed"]) == ("resumed", True)

    [installed] = run("install", "claude-code")
    assert set(installed) == {"target", "path", "changed", "message", "backup", "notes"}
    assert installed["target"] == "claude-code" and installed["changed"] is True
    assert installed["path"] == str(world["home"] / ".claude" / "settings.json")
    [removed] = run("uninstall", "claude-code")
    assert removed["target"] == "claude-code" and removed["changed"] is True

    [context] = run("history", str(world["session"]), "--subagent-context")
    assert context["context"].startswith("Context from main conversation:")
    assert all(set(m) == {"role", "content", "timestamp"} for m in run("history", str(world["session"])))
    [row] = run("status")
    assert row["key"] == f"claude-code:{SESSION_ID}" and row["source"] == "transcripts"
    assert run("sessions")[0]["key"] == f"claude-code:{SESSION_ID}"
    assert run("read", str(world["session"]))[0]["role"] == "user"
    assert {"event", "blocks", "text"} <= set(run("context", SESSION_ID[:8])[0])
    assert "text" in run("recap", str(world["session"]))[0]
    assert any(record["name"] == "sidelight.agents.claude_code" for record in run("plugins"))
    assert run("scan", str(world["pi"]))[0]["format"] == "pi"


# -- colour ----------------------------------------------------------------------------------------------


def test_color_always_colours_headers_and_states_and_never_does_not(world, run_cli):
    env = world["env"]
    coloured = run_cli("status", "--color", "always", env=env)  # after the command, like -v
    assert coloured.returncode == 0, coloured.stderr
    header = coloured.stdout.splitlines()[0]
    assert header.startswith(ANSI + "1m") and "SESSION" in header
    assert "\x1b[2mended" in coloured.stdout  # the state, in its colour (a 2026 session: long ended)
    plain = run_cli("--color", "never", "status", env={**env, "FORCE_COLOR": "1"})
    assert plain.returncode == 0 and ANSI not in plain.stdout
    assert [line.replace(" ", "") for line in plain.stdout.splitlines()] == [
        line.replace(" ", "") for line in strip_ansi(coloured.stdout).splitlines()
    ]
    scan = run_cli("--color", "always", "scan", str(world["pi"]), env=env)
    assert scan.stdout.startswith(f"{ANSI}1m{world['pi']}{ANSI}0m\n")


def test_json_is_never_coloured_and_errors_are(world, run_cli):
    env = world["env"]
    for args in (("status", "--json"), ("scan", "--json", str(world["pi"])), ("sessions", "--json")):
        done = run_cli("--color", "always", *args, env=env)
        assert done.returncode == 0, done.stderr
        assert ANSI not in done.stdout, args
        objects(done.stdout)
    failed = run_cli("scan", "--color", "always", str(world["home"] / "missing.jsonl"), env=env)
    assert failed.returncode == 1
    assert failed.stderr.startswith(ANSI) and "no such file" in failed.stderr
    assert ANSI not in run_cli("scan", str(world["home"] / "missing.jsonl"), env=env).stderr


def test_force_color_colours_a_pipe_and_no_color_wins(world, run_cli):
    env = world["env"]
    assert ANSI in run_cli("sessions", env={**env, "FORCE_COLOR": "1"}).stdout
    assert ANSI not in run_cli("sessions", env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ANSI not in run_cli("sessions", env=env).stdout  # a pipe, nothing forced


def on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """What the CLI writes to a pseudo-terminal as its stdout and stderr."""
    controller, terminal = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    full_env.update(env, TERM="xterm", COLUMNS="120")
    process = subprocess.Popen(
        [*cli_command(), *args], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=full_env
    )
    os.close(terminal)
    output = b""
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                break  # a hang is the failure: the assertions on the output say so
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(controller)
        process.wait(timeout=60)
    return output.decode("utf-8", "replace")


def test_a_terminal_is_coloured_unless_no_color_is_set(world):
    env = world["env"]
    assert ANSI in on_a_terminal(["sessions"], env)
    assert ANSI in on_a_terminal(["scan", str(world["home"] / "missing.jsonl")], env)  # the error line
    quiet = {**env, "NO_COLOR": "1"}
    for args in (["sessions"], ["--color", "auto", "status"], ["scan", str(world["home"] / "missing.jsonl")]):
        output = on_a_terminal(args, quiet)
        assert output.strip() and ANSI not in output, (args, output)
    assert ANSI in on_a_terminal(["sessions", "--color", "always"], quiet)  # said on the command line


def test_plain_commands_do_not_import_rich(world):
    """rich costs tens of milliseconds to import: a command that colours nothing never loads it."""
    code = (
        "import sys\nfrom sidelight.cli import main\n"
        f"code = main(['scan', {str(world['pi'])!r}])\n"
        "assert code == 0, code\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'rich'], 'rich imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


# -- shell completion ------------------------------------------------------------------------------------


def subcommands() -> list[str]:
    from sidelight.cli import build_parser

    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert choices is not None
    return sorted(choices)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_made_for_each_shell(run_cli, shell, tmp_path):
    done = run_cli("completion", shell)
    assert done.returncode == 0, done.stderr
    script = done.stdout
    for command in subcommands():
        assert command in script, (shell, command)
    checker = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}[shell]
    if shutil.which(checker[0]) is not None:
        path = tmp_path / f"sidelight.{shell}"
        path.write_text(script, encoding="utf-8")
        checked = subprocess.run([*checker, str(path)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr


def bash_complete(script: Path, line: str) -> list[str]:
    """What bash completes at the end of ``line`` with the script loaded, as a <TAB> would."""
    driver = (
        f"source {script}\n"
        f"COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}\n"
        'read -r -a COMP_WORDS <<< "$COMP_LINE"\n'
        '[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")\n'
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        '_shtab_sidelight sidelight "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", driver], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return sorted(word for word in done.stdout.split("\n") if word)


def test_bash_completes_commands_options_and_choices(run_cli, tmp_path):
    script = tmp_path / "sidelight.bash"
    script.write_text(run_cli("completion", "bash").stdout, encoding="utf-8")
    assert bash_complete(script, "sidelight re") == ["read", "recap", "remember", "resume"]
    assert bash_complete(script, "sidelight install co") == ["codex", "copilot"]
    assert "--json" in bash_complete(script, "sidelight remember --")
    assert bash_complete(script, "sidelight --color a") == ["always", "auto"]


def test_an_unknown_shell_is_a_usage_error(run_cli):
    done = run_cli("completion", "tcsh")
    assert done.returncode == 2 and "invalid choice" in done.stderr
    assert done.stdout == ""


# -- suspend and resume ----------------------------------------------------------------------------------


def test_suspend_takes_a_transcript_path_as_its_listed_session_and_says_a_change_once(world, run_cli):
    env = world["env"]
    first = run_cli("suspend", str(world["session"]), env=env)
    assert first.returncode == 0, first.stderr
    key = f"claude-code:{SESSION_ID}"
    assert first.stdout.startswith("suspended ") and f"({key})" in first.stdout
    assert first.stdout.count("suspended") == 1
    # The watcher keys sessions by their resolver's key: the path's key (path:...) held nothing.
    state = json.loads((world["home"] / "state" / "status.json").read_text())
    assert state["suspended"] == [key]
    again = run_cli("suspend", SESSION_ID[:8], env=env)
    assert again.returncode == 0 and again.stdout.endswith("is already suspended: nothing to do\n")
    assert run_cli("resume", SESSION_ID[:8], env=env).stdout.startswith("resumed ")
    resumed_again = run_cli("resume", SESSION_ID[:8], env=env)
    assert resumed_again.stdout.endswith("is not suspended: nothing to do\n")
    assert json.loads((world["home"] / "state" / "status.json").read_text())["suspended"] == []


@pytest.mark.parametrize(
    ("which", "words"),
    [
        ("not-a-transcript", "not a transcript"),
        ("elsewhere", "no session the watcher follows has this transcript"),
    ],
)
def test_suspend_refuses_what_no_watcher_could_hold(world, run_cli, which, words):
    env = world["env"]
    notes = world["home"] / "files" / "notes.txt"
    notes.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    path = notes if which == "not-a-transcript" else world["pi"]
    for command in ("suspend", "resume"):
        done = run_cli(command, str(path), env=env)
        assert done.returncode == 1, done.stdout
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1
        assert words in done.stderr
    assert not (world["home"] / "state" / "status.json").exists()


# -- the Python API's errors -----------------------------------------------------------------------------


def test_a_missing_transcript_is_one_sidelight_error_that_names_it_once(tmp_path):
    import sidelight
    from sidelight.errors import TranscriptIsADirectoryError, TranscriptNotFoundError

    missing = str(tmp_path / "nope.jsonl")
    calls = (sidelight.scan, sidelight.recent_entries, sidelight.detect_format)
    for call in calls:
        with pytest.raises(TranscriptNotFoundError) as caught:
            call(missing)
        error = caught.value
        assert isinstance(error, sidelight.SidelightError) and isinstance(error, FileNotFoundError)
        assert (error.errno, error.filename) == (2, missing)
        assert str(error) == f"{missing}: no such file; check the path"
        assert str(error).count(missing) == 1
    with pytest.raises(TranscriptIsADirectoryError) as directory:
        sidelight.scan(tmp_path)
    assert isinstance(directory.value, IsADirectoryError) and isinstance(
        directory.value, sidelight.SidelightError
    )
    assert str(directory.value).count(str(tmp_path)) == 1
    [failure] = sidelight.scan_many([missing])
    assert isinstance(failure, sidelight.ScanFailure)
    assert isinstance(failure.error, sidelight.SidelightError) and isinstance(
        failure.error, FileNotFoundError
    )
    assert failure.message == f"{missing}: no such file; check the path"
