"""The example third-party plugin (examples/sidelight-kiro), built and installed with pip into a
throwaway target like any third party's package, then used through sidelight's own CLI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sidelight-kiro"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed with pip into a target folder (not into the project's venv)."""
    work = tmp_path_factory.mktemp("kiro")
    source = work / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert (target / "sidelight_kiro").is_dir()
    return target


def _env(target: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    return {**env, "PYTHONPATH": str(target), "HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}


def _sidelight(target: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidelight", *args],
        env=_env(target, home),
        capture_output=True,
        text=True,
        check=False,
    )


def _kiro_home(home: Path, cwd: str = "/work/app") -> Path:
    """The example's samples as a Kiro CLI would leave them: transcripts and sidecars in one folder."""
    cli = home / ".kiro" / "sessions" / "cli"
    cli.mkdir(parents=True)
    for sample in (EXAMPLE / "src" / "sidelight_kiro" / "samples").glob("*.jsonl"):
        shutil.copy(sample, cli / sample.name)
        meta = json.loads(sample.with_suffix(".json").read_text())
        (cli / sample.with_suffix(".json").name).write_text(json.dumps({**meta, "cwd": cwd}))
    return cli


def test_the_installed_plugin_is_listed_and_conforms(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _kiro_home(home)
    listing = _sidelight(installed, home, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    records = {r["name"]: r for r in map(json.loads, listing.stdout.splitlines())}
    assert records["kiro"]["version"] == "0.1.0"
    assert records["kiro"]["provides"] == {"agents": ["kiro"], "formats": ["kiro"], "resolvers": ["kiro"]}
    check = _sidelight(installed, home, "plugins", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().endswith("all plugins conform")


def test_the_plugins_own_conformance_tests_pass_against_the_installed_copy(
    installed: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         str(EXAMPLE / "tests")],
        env=_env(installed, tmp_path), cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_check_reports_a_broken_session_listing_in_one_line(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli = _kiro_home(home)
    # A copy of a session under another file name whose sidecar still names the first: two sessions
    # with one key.
    for sample in sorted(cli.glob("*.jsonl"))[:1]:
        shutil.copy(sample, cli / "0e0e0e0e-0000-4000-8000-000000000000.jsonl")
        shutil.copy(sample.with_suffix(".json"), cli / "0e0e0e0e-0000-4000-8000-000000000000.json")
    check = _sidelight(installed, home, "plugins", "--check")
    assert check.returncode == 1
    lines = [line for line in check.stdout.splitlines() if line.startswith("kiro: ")]
    assert lines and all("two sessions have the key" in line for line in lines), check.stdout


def test_a_broken_declaration_is_one_line_naming_the_field(installed: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "bad_plugin-0.1.dist-info").mkdir(parents=True)
    (broken / "bad_plugin-0.1.dist-info" / "entry_points.txt").write_text("[sidelight]\nbad = bad_plugin\n")
    (broken / "bad_plugin-0.1.dist-info" / "METADATA").write_text("Name: bad-plugin\nVersion: 0.1\n\n")
    (broken / "bad_plugin.py").write_text(
        "from sidelight import hookimpl\n"
        "from sidelight.formats import Layout\n"
        "from sidelight.records import FormatSpec\n"
        "@hookimpl\n"
        "def sidelight_formats():\n"
        "    yield FormatSpec(name='bad', layout=Layout(role='type', title_types=('x',)))\n"
    )
    env = _env(installed, tmp_path / "home")
    env["PYTHONPATH"] = f"{broken}{os.pathsep}{installed}"
    result = subprocess.run(
        [sys.executable, "-m", "sidelight", "plugins", "--check"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert 'bad: sidelight_formats: format "bad": title_types: given without a title path' in result.stdout, (
        result.stdout
    )


def test_the_installed_plugin_shows_tool_results_in_read(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _kiro_home(home)
    result = _sidelight(installed, home, "read", "kiro-6a6a6a6a")
    assert result.returncode == 0, result.stderr
    # The ``toolResult`` block of the sample answers the ``write`` call, by its ``toolUseId``.
    assert "[write /work/app/src/env.py → Successfully modified file]" in result.stdout, result.stdout


_COLLAPSE = """
import json, sys
from dataclasses import replace
from sidelight.features.recap.collapse import TranscriptLog
from sidelight.formats import register_format
from sidelight_kiro import FORMAT, decode_line

# The plugin's layout (compiled by the core), and the same format decoded in Python (its fallback).
register_format(FORMAT)
register_format(replace(FORMAT, name="kiro-py", layout=None, decode=decode_line))
out = {}
for name in ("kiro", "kiro-py"):
    log = TranscriptLog(sys.argv[1], name)
    out[name] = [[line.kind, line.render()] for line in log] + [[log.session_id, log.interrupted]]
print(json.dumps(out))
"""


def test_the_installed_plugin_s_sessions_collapse_into_a_log(installed: Path, tmp_path: Path) -> None:
    sample = sorted((EXAMPLE / "src" / "sidelight_kiro" / "samples").glob("*.jsonl"))[0]
    result = subprocess.run(
        [sys.executable, "-c", _COLLAPSE, str(sample)],
        env=_env(installed, tmp_path), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    logs = json.loads(result.stdout)
    assert logs["kiro"] == [
        ["user", "User: The build fails on the env loader;\nfix it and run the tests"],
        # Each call is shown once, with its result from the ``ToolResults`` entry that answers it (the
        # ``thinking`` block and the empty text beside the first call are not shown).
        ["observational", "Read /work/app/src/env.py (2 lines)."],
        [
            "consequential",
            "Edited /work/app/src/env.py: replaced 'return {}' with 'return dict(os.environ)'.",
        ],
        ["assistant", "Assistant: Running the test suite."],
        ["consequential", "Ran `pytest -q tests/test_env.py` (no result recorded)."],
        ["assistant", "Assistant: Fixed: `load()` now reads the environment and the tests pass."],
        # Kiro's lines carry no session id (the sidecar does); the last call has no result.
        [None, True],
    ]
    assert logs["kiro-py"] == logs["kiro"]


def test_the_installed_plugin_s_sessions_have_a_recap_and_a_handoff(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli = _kiro_home(home)
    recap = _sidelight(installed, home, "recap", "kiro-6a6a6a6a")
    assert recap.returncode == 0, recap.stderr
    text = recap.stdout
    # Kiro's lines name no session id: the session is named by its name, not its transcript's path.
    assert text.startswith("# Recap of session kiro kiro-6a6a6a6a\n2026-04-20 09:00 UTC; 1 turn; "), text
    # The last request is quoted in the turn shown, so the header does not quote it again.
    assert 'User asked: "The build fails on the env loader; fix it and run the tests"' in text
    assert "Last request" not in text
    assert "Files edited last: /work/app/src/env.py." in text
    assert "Edited /work/app/src/env.py: replaced 'return {}' with 'return dict(os.environ)'" in text
    assert "Ran `pytest -q tests/test_env.py` (no result recorded)" in text
    # Its last words too: quoted in the turn, not again under Unfinished.
    assert 'Assistant: "Fixed: `load()` now reads the environment and the tests pass."' in text
    assert "Where it stopped" not in text and "\n## Unfinished\n- The session was interrupted" in text
    # The handoff: written by `recap --write`, and by the handoff template into the session's workspace.
    workspace = tmp_path / "app"
    workspace.mkdir()
    # The sidecars name it as the sessions' working directory: their group, and where a handoff goes.
    for sidecar in cli.glob("*.json"):
        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "cwd": str(workspace)}))
    written = _sidelight(installed, home, "recap", "kiro-7b7b7b7b", "--json", "--write", str(tmp_path))
    assert written.returncode == 0, written.stderr
    as_json = json.loads(written.stdout)
    assert as_json["format"] == "kiro" and as_json["turns"] == 2
    assert as_json["last_request"] == "and list the docs folder"
    assert as_json["files_edited"] == ["/work/app/CHANGELOG.md"]
    document = (tmp_path / "_handoff.md").read_text()
    assert document.startswith(
        '<!-- sidelight handoff {"session": "kiro:7b7b7b7b-0000-4000-8000-00000000beef"'
    )
    assert 'User asked: "write a CHANGELOG entry for the env fix"' in document
    assert "Wrote /work/app/CHANGELOG.md (3 lines)." in document
    code = (
        "import sys\n"
        "from sidelight.config import Settings\n"
        "from sidelight.plugins import get_plugins\n"
        "from sidelight.engine.discovery import resolve_session\n"
        "from sidelight.features.recap.handoff import write_for_session\n"
        "settings, plugins = Settings.load(), get_plugins()\n"
        "print(write_for_session(resolve_session(sys.argv[1], settings, plugins), settings, plugins))\n"
    )
    # In the workspace itself (it is not a git repository): by default it would be in the state directory.
    env = {**_env(installed, home), "SIDELIGHT_HANDOFF_LOCATION": "project"}
    result = subprocess.run(
        [sys.executable, "-c", code, "kiro-6a6a6a6a"], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(workspace / "_handoff.md")
    handed = (workspace / "_handoff.md").read_text()
    assert '"session": "kiro:6a6a6a6a-1b2c-4d5e-8f90-0123456789ab"' in handed.partition("\n")[0]
    assert 'User asked: "The build fails on the env loader; fix it and run the tests"' in handed
    assert "Edited /work/app/src/env.py: replaced 'return {}' with 'return dict(os.environ)'" in handed


# --- A plugin agent is first-class: its transcripts by path, its format by name, its installer --------


def _sample(tmp_path: Path) -> Path:
    """A sample transcript outside every resolver's folder: what tells its format is its lines."""
    sample = sorted((EXAMPLE / "src" / "sidelight_kiro" / "samples").glob("*.jsonl"))[0]
    copy = tmp_path / "elsewhere" / "session.jsonl"
    copy.parent.mkdir()
    shutil.copy(sample, copy)
    return copy


def test_the_installed_plugin_s_transcripts_are_read_by_path(installed: Path, tmp_path: Path) -> None:
    home, path = tmp_path / "home", str(_sample(tmp_path))
    home.mkdir()
    for how in ((), ("--format", "kiro"), ("-f", "KIRO")):
        scanned = _sidelight(installed, home, "scan", "--json", *how, path)
        assert scanned.returncode == 0, scanned.stderr
        assert json.loads(scanned.stdout)["messages"]["user"] == 1, scanned.stdout
        read = _sidelight(installed, home, "read", *how, path)
        assert read.returncode == 0, read.stderr
        assert "[write /work/app/src/env.py → Successfully modified file]" in read.stdout, read.stdout
        recap = _sidelight(installed, home, "recap", "--json", *how, path)
        assert recap.returncode == 0, recap.stderr
        assert json.loads(recap.stdout)["format"] == "kiro"
        history = _sidelight(installed, home, "history", *how, path)
        assert history.returncode == 0, history.stderr
        assert "The build fails on the env loader" in history.stdout, history.stdout


def test_errors_name_the_installed_plugin_s_format(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    for command in ("scan", "read", "recap", "history"):
        result = _sidelight(installed, home, command, str(other))
        assert result.returncode != 0
        assert "cannot detect the format" in result.stderr and "kiro" in result.stderr, result.stderr
    refused = _sidelight(installed, home, "scan", "--format", "nope", str(other))
    assert refused.returncode == 2
    assert "unknown format 'nope'" in refused.stderr and "claude-code" in refused.stderr
    assert "kiro" in refused.stderr, refused.stderr


def test_hook_sidelight_installers(installed: Path, tmp_path: Path) -> None:
    """``sidelight install kiro`` writes the plugin's agent file through the install ledger;
    ``uninstall kiro`` puts back exactly what was there (here: nothing, and no folder it made)."""
    home = tmp_path / "home"
    home.mkdir()
    agent = home / ".kiro" / "agents" / "sidelight.json"
    done = _sidelight(installed, home, "install", "kiro", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(agent)
    hooks = json.loads(agent.read_text())["hooks"]
    assert hooks["userPromptSubmit"][0]["command"].endswith(" hook kiro")
    again = _sidelight(installed, home, "install", "kiro")
    assert again.returncode == 0 and again.stdout.startswith("already installed"), again.stdout
    assert (home / "state" / "installs" / "kiro.json").is_file()
    undone = _sidelight(installed, home, "uninstall", "kiro")
    assert undone.returncode == 0, undone.stderr
    assert not (home / ".kiro").exists(), undone.stdout
    # A file that was there before install gets its bytes back.
    agent.parent.mkdir(parents=True)
    agent.write_text('{"name": "mine"}\n')
    assert _sidelight(installed, home, "install", "kiro").returncode == 0
    assert _sidelight(installed, home, "uninstall", "kiro").returncode == 0
    assert agent.read_text() == '{"name": "mine"}\n'
    # The plugin's target is listed where a wrong one is refused, beside the built-ins.
    wrong = _sidelight(installed, home, "install", "nohost")
    assert wrong.returncode == 2 and "'kiro'" in wrong.stderr and "'claude-code'" in wrong.stderr
    assert "kiro" in _sidelight(installed, home, "install", "--help").stdout
    project = _sidelight(installed, home, "install", "kiro", "--scope", "project")
    assert project.returncode == 2 and "kiro is set up for the user" in project.stderr


# --- A plugin agent's sessions beside a built-in agent's: listed, counted, shown, in the digest --------

_PROJECT = "/work/app"
_CLAUDE_ID = "cccc1111-0000-4000-8000-000000000001"

_DASHBOARD = """
import json
import re
from starlette.testclient import TestClient
from sidelight.config import Settings
from sidelight.dashboard.app import create_app
from sidelight.plugins import get_plugins

settings = Settings.load()
app = create_app(settings.state_dir, "t0ken", port=8765, settings=settings, plugins=get_plugins())
client = TestClient(app, base_url="http://127.0.0.1:8765")
client.get("/?token=t0ken", follow_redirects=False)
rows = client.get("/api/sessions").json()
kiro = next(row["id"] for row in rows if row["agent"] == "kiro")
page = client.get("/session/" + kiro)
detail = client.get("/api/sessions/" + kiro).json()
print(json.dumps({"rows": rows, "page": [page.status_code, page.text], "detail": detail}))
"""


def _beside_claude_code(home: Path) -> Path:
    """The example's Kiro sessions and one Claude Code session, all of one project, written just now
    (a Kiro session's lines get today's time: it is active, as the Claude Code one is)."""
    cli = _kiro_home(home, _PROJECT)
    stamp = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(time.time() - 120))
    for transcript in cli.glob("*.jsonl"):
        text = transcript.read_text()
        transcript.write_text(re.sub(r"2026-04-20T09:\d\d", stamp, text))
    claude = home / ".claude" / "projects" / "-work-app" / f"{_CLAUDE_ID}.jsonl"
    claude.parent.mkdir(parents=True)
    prompt = {
        "type": "user",
        "message": {"role": "user", "content": "review the env loader"},
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "sessionId": _CLAUDE_ID,
        "cwd": _PROJECT,
    }
    claude.write_text(json.dumps(prompt) + "\n")
    return claude


def _claude_prompt(claude: Path) -> str:
    return json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": _CLAUDE_ID,
            "transcript_path": str(claude),
            "cwd": _PROJECT,
            "prompt": "go on",
        }
    )


def test_the_installed_plugin_s_sessions_show_beside_claude_code_s(installed: Path, tmp_path: Path) -> None:
    """Listed by ``sessions``, counted by ``status``, rows of the dashboard with a session page of their
    own, and in the Claude Code session's digest (already so on 18108d5: a guard)."""
    home = tmp_path / "home"
    claude = _beside_claude_code(home)
    listed = _sidelight(installed, home, "sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    groups = {s["name"]: (s["format"], s["group"]) for s in map(json.loads, listed.stdout.splitlines())}
    assert groups == {
        "kiro-6a6a6a6a": ("kiro", _PROJECT),
        "kiro-7b7b7b7b": ("kiro", _PROJECT),
        "cccc1111": ("claude-code", _PROJECT),
    }
    status = _sidelight(installed, home, "status", "--json")
    assert status.returncode == 0, status.stderr
    rows = {r["name"]: r for r in map(json.loads, status.stdout.splitlines())}
    assert {r["agent"] for r in rows.values()} == {"kiro", "claude-code"} and len(rows) == 3
    assert all(r["state"] == "active" for r in rows.values()), rows
    assert rows["kiro-6a6a6a6a"]["categories"] == {"edit": 1, "read": 1, "command": 1, "other": 0}
    board = subprocess.run(
        [sys.executable, "-c", _DASHBOARD],
        env=_env(installed, home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert board.returncode == 0, board.stderr
    shown = json.loads(board.stdout)
    kiro_rows = {r["name"]: r for r in shown["rows"] if r["agent"] == "kiro"}
    assert set(kiro_rows) == {"kiro-6a6a6a6a", "kiro-7b7b7b7b"}
    assert kiro_rows["kiro-6a6a6a6a"]["project"] == _PROJECT
    assert kiro_rows["kiro-6a6a6a6a"]["files"] == ["/work/app/src/env.py"]
    status_code, page = shown["page"]
    assert status_code == 200 and "kiro-" in page and "env loader" in page, page
    assert any(turn["tool"] == "write" for turn in shown["detail"]["conversation"])
    env = {**_env(installed, home), "SIDELIGHT_WARM": "off"}
    digest = subprocess.run(
        [sys.executable, "-m", "sidelight", "hook", "claude-code"],
        input=_claude_prompt(claude), env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert digest.returncode == 0, digest.stderr
    context = json.loads(digest.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- kiro kiro-6a6a6a6a (" in context, context
    assert '"The build fails on the env loader; fix it and run the tests"' in context, context


def test_the_watcher_shows_the_plugin_s_sessions_and_its_folder_variable(
    installed: Path, tmp_path: Path
) -> None:
    """One watcher: ``status`` reads the Kiro sessions from it, it answers the Claude Code session's hook
    with them, and a hook told another ``SIDELIGHT_KIRO_DIR`` (the variable the plugin declares) answers
    itself. The service the watcher would run as is given that variable (new; the rest is a guard)."""
    home = tmp_path / "home"
    claude = _beside_claude_code(home)
    env = _env(installed, home)
    service = subprocess.run(
        [sys.executable, "-c", "import json\nfrom sidelight.install.service import _service_environment\n"
         "print(json.dumps(_service_environment()))"],
        env={**env, "SIDELIGHT_KIRO_DIR": str(home / ".kiro")}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert service.returncode == 0, service.stderr
    assert json.loads(service.stdout)["SIDELIGHT_KIRO_DIR"] == str(home / ".kiro")
    quiet = subprocess.DEVNULL
    watcher = subprocess.Popen(
        [sys.executable, "-m", "sidelight", "watch"], env=env, stdout=quiet, stderr=quiet
    )
    try:
        socket_file = home / "state" / "hook.sock"
        deadline = time.monotonic() + 30
        while not socket_file.exists():
            assert watcher.poll() is None and time.monotonic() < deadline, "the watcher did not start"
            time.sleep(0.1)
        status = _sidelight(installed, home, "status", "--json")
        rows = [json.loads(line) for line in status.stdout.splitlines()]
        assert {r["source"] for r in rows} == {"watcher"}, status.stdout
        assert sorted(r["name"] for r in rows if r["agent"] == "kiro") == ["kiro-6a6a6a6a", "kiro-7b7b7b7b"]

        def hook(**extra: str) -> str:
            done = subprocess.run(
                [sys.executable, "-m", "sidelight", "hook", "claude-code"],
                input=_claude_prompt(claude), env={**env, "SIDELIGHT_WARM_TIMEOUT": "5s", **extra},
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            return done.stdout

        def answered() -> int:
            """Hooks the watcher answered, once its snapshot (written after each answer) counts one."""
            end = time.monotonic() + 10
            while True:
                said = _sidelight(installed, home, "status").stdout
                count = int(re.search(r"(\d+) answered", said).group(1))  # type: ignore[union-attr]
                if count or time.monotonic() > end:
                    return count
                time.sleep(0.2)

        elsewhere = tmp_path / "elsewhere"
        (elsewhere / "sessions" / "cli").mkdir(parents=True)
        # Told of another Kiro folder (empty): the watcher declines, the hook answers itself: no Kiro news
        # (the watcher's answer would have some).
        assert "kiro-" not in hook(SIDELIGHT_KIRO_DIR=str(elsewhere))
        assert "kiro kiro-6a6a6a6a" in hook()
        assert answered() == 1
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
