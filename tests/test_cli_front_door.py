"""The command line as a new user meets it (issue 33, items 4 and 5): usage errors that name what is
wrong and point to the right help, bare ``sidelight``, did you mean, SESSION defaulting to the latest
session of this folder's project, the next step after ``install``, ``uninstall --purge``, the totals line
of ``scan DIR``; and ``--json`` as faithful data (texts and paths as the transcript has them, a ``cut``
list, ``--no-redact``), checked on the third-party transcripts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sidelight import Cursor, scan
from sidelight.cli import main
from tests.conftest import CLAUDE_CODE, jsonl

THIRD_PARTY = Path(__file__).parent / "fixtures" / "third-party"
FIXTURES = sorted(p for p in THIRD_PARTY.rglob("*.jsonl") if "subagents" not in p.parts)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``sidelight ARGS`` in this process: exit code (a usage error's too), stdout, stderr."""
    try:
        code = main(list(args))
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 0
    out, err = capsys.readouterr()
    return code, out, err


# -- usage errors ------------------------------------------------------------------------------------------


def test_bare_sidelight_prints_the_help_and_exits_0(capsys):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: sidelight") and "scan" in out and "status" in out


def test_an_unknown_option_is_named(capsys):
    code, _, err = run(capsys, "--frobnicate")
    assert code == 2
    assert err == "sidelight: error: unrecognized arguments: --frobnicate (see sidelight --help)\n"


def test_a_mistyped_command_gets_did_you_mean(capsys):
    code, _, err = run(capsys, "stauts")
    assert code == 2
    assert "unknown command 'stauts'; did you mean status?" in err
    code, _, err = run(capsys, "-v", "--color", "never", "sesions")
    assert code == 2 and "did you mean sessions?" in err
    code, _, err = run(capsys, "xyzzy")  # nothing near: no suggestion, the help is named
    assert code == 2 and err == "sidelight: error: unknown command 'xyzzy' (see sidelight --help)\n"


def test_difflib_is_imported_on_the_error_path_only():
    import subprocess
    import sys

    code = (
        "import sys; from sidelight.cli import build_parser; "
        "build_parser().parse_args(['sessions', '--json']); print('difflib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("False")


def test_a_subcommands_error_points_to_its_own_help(capsys):
    code, _, err = run(capsys, "status", "--frob")
    assert code == 2
    assert err == "sidelight status: error: unrecognized arguments: --frob (see sidelight status --help)\n"
    # Given before the command, the option is the top-level parser's.
    code, _, err = run(capsys, "--frob", "status")
    assert code == 2 and "(see sidelight --help)" in err


def test_global_options_without_a_command_are_a_usage_error(capsys):
    code, _, err = run(capsys, "-v")
    assert code == 2 and "no COMMAND given (see sidelight --help)" in err


# -- SESSION defaults to the latest session here -----------------------------------------------------------


def _claude_session(home: Path, cwd: Path, session_id: str, prompt: str) -> Path:
    records = [
        {**record, "cwd": str(cwd), "sessionId": session_id}
        for record in json.loads(json.dumps(CLAUDE_CODE).replace("Fix the failing test", prompt))
    ]
    folder = home / ".claude" / "projects" / str(cwd).replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text(jsonl(records), encoding="utf-8")
    return path


@pytest.fixture
def two_projects(home: Path, tmp_path: Path) -> dict[str, Any]:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    old = _claude_session(home, here, "aaaa1111-0000-4000-8000-000000000001", "the older prompt here")
    new = _claude_session(home, here, "aaaa2222-0000-4000-8000-000000000002", "the newest prompt here")
    other = _claude_session(home, there, "bbbb3333-0000-4000-8000-000000000003", "a prompt elsewhere")
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000, 2_000_000))
    os.utime(other, (3_000_000, 3_000_000))  # the newest of all, but another project's
    return {"here": here, "there": there, "empty": tmp_path}


@pytest.mark.parametrize("command", ["read", "recap", "context"])
def test_read_recap_and_context_take_the_latest_session_of_this_folder(
    two_projects, capsys, monkeypatch, command
):
    monkeypatch.chdir(two_projects["here"])
    code, out, err = run(capsys, command, "--json")
    assert code == 0, err
    if command == "context":  # what the newest would be told: of its sibling here, not of the other project
        assert json.loads(out)["session"] == "aaaa2222"
        assert "the older prompt here" in out
    else:
        assert "the newest prompt here" in out and "older" not in out
    assert "elsewhere" not in out


def test_no_session_here_lists_the_candidates(two_projects, capsys, monkeypatch):
    monkeypatch.chdir(two_projects["empty"])
    code, out, err = run(capsys, "read")
    assert code == 1 and out == ""
    assert err.count("\n") == 1
    assert f"no SESSION given and no session works in {two_projects['empty']}; known: " in err
    # Newest first, with each one's folder, as the unknown-session error lists them.
    assert err.index(str(two_projects["there"])) < err.index(str(two_projects["here"]))
    assert "run 'sidelight sessions' to list them" in err


def test_a_given_session_is_still_taken_as_given(two_projects, capsys, monkeypatch):
    monkeypatch.chdir(two_projects["here"])
    code, out, _ = run(capsys, "read", "--json", "bbbb3333")
    assert code == 0 and "a prompt elsewhere" in out


# -- install, uninstall, scan DIR --------------------------------------------------------------------------


def test_install_says_the_next_step_and_uninstall_where_the_state_stays(home, capsys):
    (home / ".claude").mkdir()
    code, out, _ = run(capsys, "install", "claude-code")
    assert code == 0
    assert out.splitlines()[-1] == (
        "next: start a new claude-code session and type a prompt; 'sidelight status' then lists it"
    )
    code, out, _ = run(capsys, "install", "claude-code", "--json")  # JSON lines only
    assert code == 0 and all(json.loads(line) for line in out.splitlines())
    code, out, _ = run(capsys, "uninstall", "claude-code")
    assert code == 0
    assert out.splitlines()[-1] == f"sidelight's state stays in {home / 'state'} (--purge removes it)"
    assert (home / "state").is_dir()


def test_uninstall_purge_removes_the_state_directory_and_says_what(home, capsys):
    (home / ".claude").mkdir()
    state = home / "state"
    assert run(capsys, "install", "claude-code")[0] == 0
    (state / "cursors").mkdir(exist_ok=True)
    (state / "cursors" / "x.json").write_text("{}", encoding="utf-8")
    code, out, err = run(capsys, "uninstall", "claude-code", "--purge")
    assert code == 0, err
    assert f"removed {state / 'cursors'}" in out.splitlines()
    assert out.splitlines()[-1] == f"removed {state}"
    assert not state.exists()
    assert not (home / ".claude" / "settings.json").exists()


def test_purge_keeps_backups_and_what_is_not_sidelights(home, capsys):
    state = home / "state"
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    assert run(capsys, "install", "claude-code")[0] == 0
    (state / "notes.txt").write_text("mine", encoding="utf-8")
    (state / "backups" / "claude-code").mkdir(parents=True, exist_ok=True)
    (state / "backups" / "claude-code" / "settings.json").write_text("{}", encoding="utf-8")
    code, out, _ = run(capsys, "uninstall", "claude-code", "--purge")
    assert code == 0
    assert f"kept {state / 'notes.txt'}: not sidelight's" in out
    assert f"kept {state / 'backups'}: backups of files you had edited" in out
    assert (state / "notes.txt").exists() and (state / "backups").is_dir()
    assert not (state / "installs").exists()


def test_purge_waits_for_the_last_installed_target(home, capsys):
    (home / ".claude").mkdir()
    (home / ".codex").mkdir()
    assert run(capsys, "install", "claude-code")[0] == 0
    assert run(capsys, "install", "codex")[0] == 0
    code, _, err = run(capsys, "uninstall", "codex", "--purge")
    assert code == 2
    assert "claude-code is still installed" in err and "uninstall it first" in err
    assert (home / ".codex" / "hooks.json").exists()  # nothing was done


def test_scan_dir_ends_with_a_totals_line(capsys):
    code, out, _ = run(capsys, "scan", str(THIRD_PARTY / "pi"))
    assert code == 0
    last = out.splitlines()[-1]
    assert last.startswith("total: 1 transcript, ") and " messages, " in last and "tool uses" in last
    code, out, _ = run(capsys, "scan", str(THIRD_PARTY))
    last = out.splitlines()[-1]
    assert last.startswith(f"total: {len(list(THIRD_PARTY.rglob('*.jsonl')))} transcripts, ")
    assert last.endswith(" files touched")
    code, out, _ = run(capsys, "scan", "--json", str(THIRD_PARTY / "pi"))  # JSON lines only
    assert [json.loads(line)["format"] for line in out.splitlines()] == ["pi"]


# -- --json is faithful data -------------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def _transcript_strings(path: Path) -> list[str]:
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            found += _strings(json.loads(line))
        except ValueError:
            continue
    return found


def _in_transcript(text: str, strings: list[str]) -> bool:
    """Whether ``text`` is what the transcript holds: each of its lines inside one of its strings (a
    text joined from several blocks is joined with line breaks)."""
    return all(any(line in s for s in strings) for line in text.split("\n"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scan_json_keeps_the_transcripts_texts_and_paths(path, capsys):
    code, out, err = run(capsys, "scan", "--json", "--no-redact", str(path))
    assert code == 0, err
    record = json.loads(out)
    strings = _transcript_strings(path)
    texts = {
        name: record[name] for name in ("first_user_text", "last_user_text", "last_assistant_text", "title")
    }
    texts.update({f"tool_uses[{n}]": use["primary_arg"] for n, use in enumerate(record["tool_uses"])})
    texts.update({f"files_touched[{n}]": file for n, file in enumerate(record["files_touched"])})
    texts["cwd"] = record["cwd"]
    if "<command-name>" in path.read_text(encoding="utf-8"):  # a slash command is read as "/name args"
        texts = {k: v for k, v in texts.items() if not (k.endswith("user_text") and v and v[0] == "/")}
    wrong = {name: text for name, text in texts.items() if text and not _in_transcript(text, strings)}
    assert wrong == {}
    for name in record["cut"]:
        assert name in ("first_user_text", "last_user_text", "last_assistant_text", "tool_uses")
    for use in record["tool_uses"]:
        assert set(use["cut"]) <= {"primary_arg", "old_text", "new_text"}


@pytest.fixture
def spaced(tmp_path: Path) -> Path:
    """A third-party Claude Code transcript in a folder whose name has two spaces, working there, with
    an indented, aligned command, and a prompt and a reply longer than the cut."""
    folder = tmp_path / "my  project"
    folder.mkdir()
    path = folder / "session.jsonl"
    source = THIRD_PARTY / "claude-code" / "daaain-claude-code-log__representative_messages.jsonl"
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    path.write_text(jsonl([{**line, "cwd": str(folder)} if "cwd" in line else line for line in lines]))
    command = 'for f in *.py; do\n    echo  "$f"   |  wc -l\ndone'
    extra = [
        {
            "type": "user",
            "sessionId": "s1",
            "cwd": str(folder),
            "timestamp": "2026-01-01T00:00:00Z",
            "uuid": "x1",
            "message": {"role": "user", "content": "  table:\n  a    b\n  cc   d\n" + "p " * 400},
        },
        {
            "type": "assistant",
            "sessionId": "s1",
            "cwd": str(folder),
            "timestamp": "2026-01-01T00:00:01Z",
            "uuid": "x2",
            "message": {
                "id": "m-x2",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}},
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Write",
                        "input": {"file_path": f"{folder}/src/a  b.py", "content": "x = 1\n"},
                    },
                    {"type": "text", "text": "done:\n\tindented\n" + "r" * 600},
                ],
            },
        },
    ]
    with path.open("a", encoding="utf-8") as out:
        out.write(jsonl(extra))
    return path


def test_scan_json_keeps_spaces_indentation_and_says_what_was_cut(spaced, capsys):
    code, out, _ = run(capsys, "scan", "--json", str(spaced))
    assert code == 0
    record = json.loads(out)
    folder = str(spaced.parent)
    assert record["path"] == str(spaced)
    assert record["cwd"] == folder
    assert f"{folder}/src/a  b.py" in record["files_touched"]
    bash = record["tool_uses"][-2]  # the newest but one (the last is the Write)
    assert bash["primary_arg"] == 'for f in *.py; do\n    echo  "$f"   |  wc -l\ndone'
    assert bash["cut"] == []
    assert record["last_user_text"].startswith("table:\n  a    b\n  cc   d\n")
    assert len(record["last_user_text"]) == 500
    assert record["last_assistant_text"].startswith("done:\n\tindented\nrrr")
    assert len(record["last_assistant_text"]) == 500 and not record["last_assistant_text"].endswith("…")
    assert {"last_user_text", "last_assistant_text"} <= set(record["cut"])
    # The terminal form is sanitized: one line, whitespace collapsed.
    code, out, _ = run(capsys, "scan", str(spaced))
    assert 'last reply  "done: indented rrr' in out


def test_a_saved_scans_path_and_cursor_resume_it(spaced, capsys):
    _, out, _ = run(capsys, "scan", "--json", str(spaced))
    saved = json.loads(out)
    with spaced.open("a", encoding="utf-8") as more:
        more.write(
            jsonl(
                [
                    {
                        "type": "user",
                        "sessionId": "s1",
                        "timestamp": "2026-01-01T00:00:09Z",
                        "uuid": "x3",
                        "message": {"role": "user", "content": "one more  prompt"},
                    }
                ]
            )
        )
    later = scan(saved["path"], cursor=Cursor.from_dict(saved["cursor"]))
    assert later.reset is None and later.lines == 1
    assert later.first_user_text == "one more  prompt"


def test_json_redacts_secrets_unless_no_redact(tmp_path, capsys):
    key = "sk-ant-api03-" + "a1B2" * 20
    path = tmp_path / "s.jsonl"
    path.write_text(
        jsonl(
            [
                {
                    "type": "user",
                    "sessionId": "s",
                    "cwd": "/w",
                    "timestamp": "t",
                    "uuid": "u",
                    "message": {"role": "user", "content": f"use  {key}\n  please"},
                }
            ]
        ),
        encoding="utf-8",
    )
    _, out, _ = run(capsys, "scan", "--json", str(path))
    assert json.loads(out)["first_user_text"] == "use  [REDACTED:anthropic-key]\n  please"
    _, out, _ = run(capsys, "scan", "--json", "--no-redact", str(path))
    assert json.loads(out)["first_user_text"] == f"use  {key}\n  please"
    _, out, _ = run(capsys, "read", "--json", str(path))
    assert json.loads(out)["text"] == "use  [REDACTED:anthropic-key]\n  please"
    _, out, _ = run(capsys, "read", "--json", "--no-redact", str(path))
    entry = json.loads(out)
    assert entry["text"] == f"use  {key}\n  please" and entry["cut"] == []


def test_read_json_keeps_spaces_and_says_what_was_cut(spaced, capsys):
    code, out, _ = run(capsys, "read", "--json", "-n", "3", str(spaced))
    assert code == 0
    entries = [json.loads(line) for line in out.splitlines()]
    bash = next(e for e in entries if e["tool_name"] == "Bash")
    assert bash["primary_arg"] == 'for f in *.py; do\n    echo  "$f"   |  wc -l\ndone'
    write = next(e for e in entries if e["tool_name"] == "Write")
    assert write["primary_arg"] == f"{spaced.parent}/src/a  b.py"
    reply = next(e for e in entries if e["role"] == "assistant")
    assert reply["text"].startswith("done:\n\tindented\n") and reply["cut"] == []
