"""``sidelight scan`` run as a user runs it: a subprocess on real and small sample transcripts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.conftest import EXPECTED, PI, jsonl

JSON_KEYS = {
    "path",
    "format",
    "offset",
    "messages",
    "tools",
    "categories",
    "files_touched",
    "first_user_text",
    "last_assistant_text",
    "first_timestamp",
    "last_timestamp",
    "skipped",
    "skipped_lines",
    "cursor",
}


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def assert_clean_stderr(stderr: str, lines: int) -> list[str]:
    """Errors are one line each, prefixed, never a traceback."""
    assert "Traceback" not in stderr
    got = stderr.splitlines()
    assert len(got) == lines, stderr
    assert all(re.match(r"sidelight( scan)?: ", line) for line in got), got
    return got


def test_human_output_of_a_real_session(run_cli, pi_corpus):
    path = pi_corpus / "large-session.jsonl"
    result = run_cli("scan", path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == str(path)
    labels = [line.split()[0] for line in lines[1:]]
    assert labels[:3] == ["format", "messages", "tools"]
    assert "  format      pi" in result.stdout
    assert all(len(line) < 200 for line in lines)


def test_human_output_of_a_sample(run_cli, write_sample):
    path = write_sample("claude-code")
    result = run_cli("scan", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"{path}\n"
        "  format      claude-code\n"
        "  messages    1 user, 4 assistant\n"
        "  tools       3 (1 edit, 1 read, 1 command): Bash 1, Edit 1, Read 1\n"
        "  files       1 touched: x.py\n"  # relative to the session's cwd, /tmp/proj
        '  first user  "Fix the failing test"\n'
        '  last reply  "Fixed: the test passes now."\n'
        "  time        2026-01-01T10:00:00.000Z → 2026-01-01T10:00:08.000Z\n"
    )


def test_human_output_shows_skipped_lines_and_no_control_characters(run_cli, tmp_path):
    path = tmp_path / "s.jsonl"
    prompt = {**PI[1], "message": {"role": "user", "content": "red \x1b[31malert\x1b[0m\nsecond line"}}
    path.write_text(jsonl([PI[0], prompt]) + "{oops\n", encoding="utf-8")
    result = run_cli("scan", path)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert '  first user  "red [31malert [0m second line"\n' in result.stdout
    assert "  skipped     1 line (malformed_json 1)\n" in result.stdout
    assert "  tools       none\n" in result.stdout


def test_json_lines_for_several_files(run_cli, write_sample, pi_corpus):
    paths = [write_sample("codex"), pi_corpus / "before-compaction.jsonl", write_sample("pi")]
    result = run_cli("scan", "--json", *paths)
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert [r["path"] for r in records] == [str(p) for p in paths]
    assert [r["format"] for r in records] == ["codex", "pi", "pi"]
    for record in records:
        assert set(record) >= JSON_KEYS
        skipped = record["skipped_lines"]
        assert skipped == {**record["skipped"], "total": sum(record["skipped"].values())}
    for key, value in EXPECTED["codex"].items():
        assert records[0][key] == value, key
    assert records[1]["offset"] == paths[1].stat().st_size


def test_missing_path_in_the_middle(run_cli, write_sample, tmp_path):
    missing = tmp_path / "gone.jsonl"
    first, last = write_sample("pi"), write_sample("codex")
    result = run_cli("scan", "--json", first, missing, last)
    assert result.returncode == 1
    [error] = assert_clean_stderr(result.stderr, 1)
    assert error == f"sidelight: {missing}: no such file; check the path"
    assert [r["path"] for r in json_lines(result.stdout)] == [str(first), str(last)]


def test_missing_single_path(run_cli, tmp_path):
    result = run_cli("scan", tmp_path / "gone.jsonl")
    assert result.returncode == 1
    assert result.stdout == ""
    assert_clean_stderr(result.stderr, 1)


def test_directory_path(run_cli, write_sample, tmp_path):
    sample = write_sample("pi")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("scan", empty, sample)
    assert result.returncode == 1
    [error] = assert_clean_stderr(result.stderr, 1)
    assert error == f"sidelight: {empty}: no transcripts (*.jsonl) under this folder"
    assert result.stdout.startswith(f"{sample}\n")


@pytest.mark.parametrize("content", ["", '{"hello": "world"}\n'], ids=["empty", "foreign"])
def test_undetectable_format(run_cli, tmp_path, content):
    path = tmp_path / "notes.jsonl"
    path.write_text(content, encoding="utf-8")
    result = run_cli("scan", path)
    assert result.returncode == 1
    [error] = assert_clean_stderr(result.stderr, 1)
    assert str(path) in error
    assert "--format" in error
    # told the format, the CLI scans it (and finds nothing)
    result = run_cli("scan", "--json", "--format", "pi", path)
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[0]["messages"] == {"user": 0, "assistant": 0}


def test_format_override_and_its_environment_variable(run_cli, write_sample):
    path = write_sample("claude-code")
    by_option = run_cli("scan", "--json", "--format", "pi", path)
    by_env = run_cli("scan", "--json", path, env={"SIDELIGHT_FORMAT": "pi"})
    for result in (by_option, by_env):
        # The override is taken: the file is read as pi, where it counts nothing, and that is said
        # (issue 21: not a row of zeros with exit 0).
        assert result.returncode == 1, result.stderr
        assert "reads as claude-code, not pi" in result.stderr
        assert result.stdout == ""
    # the option wins over the environment
    result = run_cli("scan", "--json", "-f", "auto", path, env={"SIDELIGHT_FORMAT": "pi"})
    assert json_lines(result.stdout)[0]["format"] == "claude-code"


def test_json_environment_variable(run_cli, write_sample):
    result = run_cli("scan", write_sample("pi"), env={"SIDELIGHT_JSON": "1"})
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[0]["format"] == "pi"


@pytest.mark.parametrize(
    ("args", "env"),
    [(["scan", "--format", "aider", "x.jsonl"], {}), (["scan", "x.jsonl"], {"SIDELIGHT_FORMAT": "aider"})],
)
def test_bad_format_is_a_usage_error(run_cli, args, env):
    result = run_cli(*args, env=env)
    assert result.returncode == 2
    [error] = assert_clean_stderr(result.stderr, 1)
    assert "unknown format 'aider'" in error
    assert "claude-code" in error


@pytest.mark.parametrize("args", [["-v"], ["scan"], ["frobnicate"], ["scan", "--nope", "x"]])
def test_usage_errors_are_one_line(run_cli, args):
    result = run_cli(*args)
    assert result.returncode == 2
    [error] = assert_clean_stderr(result.stderr, 1)
    assert re.search(r"\(see sidelight( scan)? --help\)$", error)


def test_version(run_cli):
    from importlib.metadata import version

    for flag in ("--version", "-V"):
        result = run_cli(flag)
        assert result.returncode == 0
        assert result.stdout == f"sidelight {version('sidelight')}\n"


def test_verbosity(run_cli, write_sample, tmp_path):
    sample = write_sample("pi")
    verbose = run_cli("-v", "scan", sample)
    assert verbose.returncode == 0
    assert f"sidelight: {sample}: " in verbose.stderr
    env_verbose = run_cli("scan", sample, env={"SIDELIGHT_LOG_LEVEL": "info"})
    assert env_verbose.stderr == verbose.stderr
    quiet = run_cli("-q", "scan", sample, tmp_path / "gone.jsonl")
    assert quiet.returncode == 1
    assert_clean_stderr(quiet.stderr, 1)  # errors are still said
    # Global flags after the command too (issue 21), counted with those before it.
    assert run_cli("scan", sample, "-v").stderr == verbose.stderr
    assert run_cli("scan", "--verbose", sample).stderr == verbose.stderr
    assert run_cli("-q", "scan", sample, "-v").stderr == ""  # -q and -v cancel out: warnings only
    assert run_cli("scan", "-q", sample, tmp_path / "gone.jsonl").stderr == quiet.stderr


@pytest.mark.parametrize("json_lines", [False, True])
def test_a_closed_pipe_ends_quietly_with_exit_0(write_sample, json_lines):
    """``sidelight scan ... | head -1`` (issue 21): the reader going away is no failure, as for ripgrep:
    exit 0 and nothing on stderr (it used to exit 1, like a file that could not be read)."""
    import os
    import subprocess

    from tests.conftest import cli_command

    sample = write_sample("pi")
    env = {key: value for key, value in os.environ.items() if not key.startswith("SIDELIGHT_")}
    flags = ["--json"] if json_lines else []
    with subprocess.Popen(
        [*cli_command(), "scan", *flags, *[str(sample)] * 400],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline()
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=120) == 0
    assert stderr == b""


def test_scan_reads_standard_input_and_folders(run_cli, write_sample, tmp_path):
    """``scan -`` reads standard input and ``scan DIR`` every ``*.jsonl`` under the folder, recursively
    (issue 21; both used to fail: "no such file", "is a directory")."""
    import os
    import subprocess

    from tests.conftest import cli_command

    pi = write_sample("pi")
    folder = tmp_path / "sessions"
    (folder / "deeper").mkdir(parents=True)
    first = write_sample("claude-code", "sessions/a.jsonl")
    second = write_sample("codex", "sessions/deeper/b.jsonl")
    (folder / "notes.txt").write_text("not a transcript\n")
    expected = json.loads(run_cli("scan", "--json", pi).stdout)

    env = {key: value for key, value in os.environ.items() if not key.startswith("SIDELIGHT_")}
    piped = subprocess.run(
        [*cli_command(), "scan", "--json", "-"],
        input=pi.read_bytes(),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == {**expected, "path": "-", "cursor": None}

    found = run_cli("scan", "--json", folder)
    assert found.returncode == 0, found.stderr
    records = [json.loads(line) for line in found.stdout.splitlines()]
    assert [(r["path"], r["format"]) for r in records] == [
        (str(first), "claude-code"),
        (str(second), "codex"),
    ]


def test_an_unknown_log_level_is_said_once(run_cli, write_sample):
    sample = write_sample("pi")
    done = run_cli("scan", sample, env={"SIDELIGHT_LOG_LEVEL": "loud"})
    assert done.returncode == 0
    [line] = assert_clean_stderr(done.stderr, 1)
    assert (
        line == "sidelight: SIDELIGHT_LOG_LEVEL=loud is no level; use debug, info, warning, error (ignored)"
    )
    assert run_cli("-q", "scan", sample, env={"SIDELIGHT_LOG_LEVEL": "loud"}).stderr == ""


def test_python_dash_m(run_cli, write_sample):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "sidelight", "scan", "--json", write_sample("pi")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[0]["format"] == "pi"
