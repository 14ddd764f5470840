"""`sidelight install` / `uninstall` for Claude Code, Codex and Pi, and the files shipped for the hosts."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import sidelight.agents
from sidelight import install
from sidelight.agents.claude_code import install as claude_install
from sidelight.agents.codex import install as codex_install
from sidelight.agents.copilot import install as copilot_install
from sidelight.agents.pi import install as pi_install
from sidelight.agents.qwen import install as qwen_install
from sidelight.install.command import HOOK_TIMEOUT
from sidelight.install.service import SERVICE_ENVIRONMENT
from tests.conftest import cli_command

AGENTS = Path(sidelight.agents.__file__).parent
#: The files shipped for the hosts, each in its agent's folder.
CLAUDE_PLUGIN = AGENTS / "claude_code" / "plugin"
PI_EXTENSION = AGENTS / "pi" / "extension.ts"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME, with the agents' own location variables cleared (sidelight's state directory
    is the default one in it, ``~/.local/state/sidelight``, as the CLI runs with HOME alone)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # The service's variables (the agents' folders, the state and config), and the other install reads.
    for name in (*SERVICE_ENVIRONMENT, "XDG_CONFIG_HOME", "SIDELIGHT_BIN"):
        monkeypatch.delenv(name, raising=False)
    return home


def cli(
    home: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {
        k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "CODEX_", "PI_"))
    }
    full["HOME"] = str(home)
    full.update(env or {})
    return subprocess.run(
        [*cli_command(), *args], capture_output=True, text=True, env=full, cwd=cwd, timeout=60, check=False
    )


def ours(settings: dict[str, Any], event: str, host: str = "claude-code") -> list[dict[str, Any]]:
    return [
        hook
        for group in settings.get("hooks", {}).get(event, [])
        for hook in group["hooks"]
        if hook.get("command", "").endswith(f"hook {host}")
    ]


def backups(path: Path) -> list[Path]:
    """The backups of ``path``: in the state directory, and (there must be none) beside it."""
    beside = sorted(path.parent.glob(f"{path.name}.sidelight-backup-*")) if path.parent.is_dir() else []
    assert beside == [], "a backup was written beside the file"
    return sorted((state_dir() / "backups").glob(f"*/*-{path.name}"))


def state_dir() -> Path:
    return Path(os.environ["HOME"]) / ".local" / "state" / "sidelight"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (``None``) under ``root``, but sidelight's state directory."""
    state = state_dir()
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if not (p == state or state.is_relative_to(p) or p.is_relative_to(state))
    }


OTHER_HOOK = {"type": "command", "command": "echo other", "timeout": 5}
EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [OTHER_HOOK]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}],
    },
}


# ---------------------------------------------------------------------------------------------------
# The command


def test_sidelight_command_is_absolute_and_runs() -> None:
    command = install.sidelight_command()
    assert Path(command[0]).is_absolute()
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("sidelight ")


def test_sidelight_command_prefers_the_script_beside_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIDELIGHT_BIN", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # the venv is not on PATH
    script = Path(sys.executable).with_name("sidelight")
    expected = (
        [str(script.absolute())]
        if script.is_file()
        else [str(Path(sys.executable).absolute()), "-m", "sidelight"]
    )
    assert install.sidelight_command() == expected


def test_sidelight_bin_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_BIN", "/opt/x/python -m sidelight")
    assert install.sidelight_command() == ["/opt/x/python", "-m", "sidelight"]


# ---------------------------------------------------------------------------------------------------
# Claude Code


def test_claude_code_install_adds_the_three_hooks(home: Path) -> None:
    result = claude_install.install_claude_code()
    path = home / ".claude" / "settings.json"
    assert result.changed and result.path == path and result.backup is None
    settings = json.loads(path.read_text())
    for event in claude_install.CLAUDE_EVENTS:
        (hook,) = ours(settings, event)
        assert hook["type"] == "command" and hook["timeout"] == HOOK_TIMEOUT
        argv = shlex.split(hook["command"])
        assert argv[-2:] == ["hook", "claude-code"] and Path(argv[0]).is_absolute()


def test_claude_code_install_is_idempotent(home: Path) -> None:
    claude_install.install_claude_code()
    path = home / ".claude" / "settings.json"
    before = path.read_text()
    again = claude_install.install_claude_code()
    assert not again.changed and "already installed" in again.message
    assert path.read_text() == before
    assert backups(path) == []


def test_claude_code_install_keeps_other_hooks_and_settings_and_backs_up(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=4)
    path.write_text(original)
    path.chmod(0o600)
    result = claude_install.install_claude_code()
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == EXISTING["permissions"]
    # Theirs kept; ours added, matched to the write tools (the stale-write guard).
    assert settings["hooks"]["PreToolUse"][:-1] == EXISTING["hooks"]["PreToolUse"]
    assert settings["hooks"]["PreToolUse"][-1]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    assert len(ours(settings, "PreToolUse")) == 1
    assert OTHER_HOOK in [h for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert len(ours(settings, "UserPromptSubmit")) == 1
    (backup,) = backups(path)
    assert result.backup == backup and backup.read_text() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the mode survives the atomic write
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_claude_code_install_updates_a_moved_command(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_BIN", "/old/venv/bin/sidelight")
    claude_install.install_claude_code()
    monkeypatch.setenv("SIDELIGHT_BIN", "/new/venv/bin/sidelight")
    assert claude_install.install_claude_code().changed
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    for event in claude_install.CLAUDE_EVENTS:
        assert [h["command"] for h in ours(settings, event)] == ["/new/venv/bin/sidelight hook claude-code"]


def test_claude_code_install_quotes_paths_with_spaces(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_BIN", shlex.quote("/opt/my tools/sidelight"))
    claude_install.install_claude_code()
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (hook,) = ours(settings, "UserPromptSubmit")
    assert shlex.split(hook["command"]) == ["/opt/my tools/sidelight", "hook", "claude-code"]


@pytest.mark.parametrize(
    "text", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"UserPromptSubmit": {}}}']
)
def test_claude_code_install_refuses_a_broken_settings_file(home: Path, text: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(install.InstallError, match="nothing was changed"):
        claude_install.install_claude_code()
    assert path.read_text() == text and backups(path) == []


def test_claude_code_cli_refuses_bad_json_with_one_line(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{oops")
    done = cli(home, "install", "claude-code")
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "not valid JSON" in done.stderr, done.stderr
    assert path.read_text() == "{oops"


def test_claude_code_uninstall_removes_only_ours(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(EXISTING))
    claude_install.install_claude_code()
    result = claude_install.uninstall_claude_code()
    # Still as install left it: the user's file comes back byte for byte (no backup needed).
    assert result.changed and result.backup is None and "restored" in result.message
    assert path.read_text() == json.dumps(EXISTING)
    again = claude_install.uninstall_claude_code()
    assert not again.changed and "not installed" in again.message


def test_claude_code_uninstall_removes_the_file_and_folder_install_created(home: Path) -> None:
    claude_install.install_claude_code()
    result = claude_install.uninstall_claude_code()
    assert result.changed and result.backup is None
    assert tree(home) == {}  # no `{}` settings file, no empty .claude folder
    assert "sidelight had created it" in result.message and str(home / ".claude") in result.message


def test_claude_code_uninstall_keeps_look_alike_commands(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    keep = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-hook claude-code"}]}]}
    }
    path.write_text(json.dumps(keep))
    assert not claude_install.uninstall_claude_code().changed
    assert json.loads(path.read_text()) == keep


def test_claude_code_project_scope(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = cli(home, "install", "claude-code", "--scope", "project", cwd=project)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert len(ours(settings, "SessionStart")) == 1
    assert not (home / ".claude" / "settings.json").exists()
    done = cli(home, "uninstall", "claude-code", "--scope", "project", cwd=project)
    assert done.returncode == 0 and tree(project) == {}


def test_claude_code_honours_claude_config_dir(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert claude_install.install_claude_code().path == config / "settings.json"


def test_claude_code_cli_install_twice(home: Path) -> None:
    first = cli(home, "install", "claude-code")
    second = cli(home, "install", "claude-code")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "installed" in first.stdout and "already installed" in second.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert all(len(ours(settings, event)) == 1 for event in claude_install.CLAUDE_EVENTS)


def test_installed_hook_command_runs(home: Path) -> None:
    """The installed command runs as is, from an empty PATH, and stays silent on a prompt with no news."""
    claude_install.install_claude_code()
    (hook,) = ours(json.loads((home / ".claude" / "settings.json").read_text()), "UserPromptSubmit")
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "x", "cwd": str(home), "prompt": "hi"}
    done = subprocess.run(
        hook["command"],
        shell=True,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


# ---------------------------------------------------------------------------------------------------
# Codex

CODEX_CONFIG = """\
# my codex settings
model = "gpt-5.5"   # a comment that must survive
model_provider = "mock"

[model_providers.mock]
base_url = "http://127.0.0.1:1/v1"
"""


def test_codex_install_writes_hooks_and_enables_the_feature(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_CONFIG)
    results = codex_install.install_codex()
    assert all(r.changed for r in results) and len(results) == 2
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())
    assert set(hooks["hooks"]) == set(codex_install.CODEX_EVENTS)
    for event in codex_install.CODEX_EVENTS:
        (hook,) = ours(hooks, event, "codex")
        assert shlex.split(hook["command"])[-2:] == ["hook", "codex"]
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)  # the rest is untouched, comments included
    assert tomllib.loads(text)["features"] == {"hooks": True}
    assert backups(config)[0].read_text() == CODEX_CONFIG
    assert any("trust" in note for r in results for note in r.notes)


def test_codex_install_is_idempotent(home: Path) -> None:
    codex_install.install_codex()
    hooks, config = home / ".codex" / "hooks.json", home / ".codex" / "config.toml"
    before = (hooks.read_text(), config.read_text())
    results = codex_install.install_codex()
    assert [r.changed for r in results] == [False]
    assert (hooks.read_text(), config.read_text()) == before


@pytest.mark.parametrize(
    ("config", "expected_tail"),
    [
        ("[features]\nweb_search = true\n\n[other]\nx = 1\n", None),
        ("[features]\nhooks = false # off\nweb_search = true\n", None),
        ('model = "m"', None),
        ("", None),
    ],
)
def test_codex_feature_flag_edit_is_conservative(home: Path, config: str, expected_tail: None) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(config)
    codex_install.install_codex()
    new = path.read_text()
    data = tomllib.loads(new)
    assert data["features"]["hooks"] is True
    old = tomllib.loads(config)
    for key, value in old.items():
        if key != "features":
            assert data[key] == value
    for key, value in old.get("features", {}).items():
        if key != "hooks":
            assert data["features"][key] == value
    # Only the one line changed or was added.
    assert len(new.splitlines()) - len(config.splitlines()) <= 3


def test_codex_flag_already_on_is_left_alone(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("features.hooks = true\n")
    codex_install.install_codex()
    assert path.read_text() == "features.hooks = true\n" and backups(path) == []


def test_codex_refuses_broken_toml_and_changes_nothing(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("model = \n")
    with pytest.raises(install.InstallError, match="not valid TOML"):
        codex_install.install_codex()
    assert not (home / ".codex" / "hooks.json").exists()


def test_codex_keeps_other_hooks_and_the_flag_they_need(home: Path) -> None:
    hooks = home / ".codex" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    other = {"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}], "UserPromptSubmit": [{"hooks": [OTHER_HOOK]}]}}
    hooks.write_text(json.dumps(other))
    codex_install.install_codex()
    assert OTHER_HOOK in json.loads(hooks.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"]
    results = codex_install.uninstall_codex()
    # The user's hooks were there, the flag off, before install: both come back as they were.
    assert json.loads(hooks.read_text()) == other
    assert not (home / ".codex" / "config.toml").exists() and len(results) == 2
    # Hooks added since install may rely on the flag install turned on: it stays, and uninstall says so.
    codex_install.install_codex()
    added = json.loads(hooks.read_text())
    added["hooks"]["SessionStart"].append({"hooks": [OTHER_HOOK]})
    hooks.write_text(json.dumps(added))
    (result,) = codex_install.uninstall_codex()
    assert result.changed and any("stays" in note for note in result.notes)
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["features"]["hooks"] is True


def test_codex_honours_codex_home(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    results = codex_install.install_codex()
    assert results[0].path == tmp_path / "codex-home" / "hooks.json"


def test_codex_cli(home: Path) -> None:
    done = cli(home, "install", "codex")
    assert done.returncode == 0 and "hooks.json" in done.stdout and "trust" in done.stderr
    done = cli(home, "uninstall", "codex")
    assert done.returncode == 0 and "removed" in done.stdout


# ---------------------------------------------------------------------------------------------------
# Pi


def test_pi_install_copies_the_extension_with_the_command_baked_in(home: Path) -> None:
    result = pi_install.install_pi()
    path = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    assert result.changed and result.path == path
    text = path.read_text()
    assert pi_install.PI_MARKER in text
    line = next(line for line in text.splitlines() if line.startswith("const INSTALLED_COMMAND"))
    baked = json.loads(line.split("=", 1)[1].strip().rstrip(";"))
    assert baked == install.sidelight_command()
    assert 'pi.on("before_agent_start"' in text and '"session-update"' in text


def test_pi_install_is_idempotent_and_backs_up_a_changed_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pi_install.install_pi()
    assert not pi_install.install_pi().changed
    path = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    monkeypatch.setenv("SIDELIGHT_BIN", "/elsewhere/sidelight")
    result = pi_install.install_pi()  # its own file as it wrote it: replaced without a backup
    assert result.changed and result.backup is None and '["/elsewhere/sidelight"]' in path.read_text()
    edited = path.read_text() + "// my change\n"
    path.write_text(edited)
    monkeypatch.setenv("SIDELIGHT_BIN", "/again/sidelight")
    result = pi_install.install_pi()
    assert result.backup is not None and backups(path) == [result.backup]
    assert result.backup.read_text() == edited and result.backup.parent == state_dir() / "backups" / "pi"


def test_pi_uninstall_removes_only_its_own_file(home: Path) -> None:
    pi_install.install_pi()
    assert pi_install.uninstall_pi().changed
    assert not (home / ".pi" / "agent" / "extensions" / "sidelight.ts").exists()
    assert not pi_install.uninstall_pi().changed
    assert tree(home) == {}  # the folders install made went with it
    foreign = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("export default function (pi) {}\n")
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        pi_install.uninstall_pi()
    assert foreign.exists()


def test_pi_honours_pi_coding_agent_dir(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    assert pi_install.install_pi().path == tmp_path / "pi-agent" / "extensions" / "sidelight.ts"


def test_pi_cli(home: Path) -> None:
    done = cli(home, "install", "pi")
    assert done.returncode == 0 and "sidelight.ts" in done.stdout, done.stderr


# ---------------------------------------------------------------------------------------------------
# The skill (written by the reader; routed through `install`)


def test_skill_install_routes_to_the_reader(home: Path) -> None:
    done = cli(home, "install", "skill")
    assert done.returncode == 0, done.stderr
    skill = home / ".claude" / "skills" / "sessions" / "SKILL.md"
    assert skill.is_file()
    assert "already installed" in cli(home, "install", "skill").stdout
    assert cli(home, "uninstall", "skill").returncode == 0 and not skill.exists()


def test_unknown_target_is_a_usage_error(home: Path) -> None:
    done = cli(home, "install", "emacs")
    assert done.returncode == 2 and "invalid choice" in done.stderr


# ---------------------------------------------------------------------------------------------------
# Files shipped for the hosts


def test_shipped_integration_files_exist() -> None:
    assert (PI_EXTENSION).is_file()
    assert (CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json").is_file()
    assert (CLAUDE_PLUGIN / "hooks" / "hooks.json").is_file()
    assert (CLAUDE_PLUGIN / "bin" / "sidelight-hook").is_file()
    assert claude_install.claude_plugin_dir() == CLAUDE_PLUGIN


def test_claude_code_plugin_manifest_and_hooks_are_valid() -> None:
    manifest = json.loads((CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "sidelight" and manifest["description"]
    hooks = json.loads((CLAUDE_PLUGIN / "hooks" / "hooks.json").read_text())
    assert set(hooks["hooks"]) == set(claude_install.CLAUDE_EVENTS)
    for groups in hooks["hooks"].values():
        (group,) = groups
        (hook,) = group["hooks"]
        assert hook["type"] == "command" and isinstance(hook["timeout"], int)
        assert "${CLAUDE_PLUGIN_ROOT}/bin/sidelight-hook" in hook["command"]
        assert hook["command"].endswith("claude-code")
    assert hooks["hooks"]["PreToolUse"][0]["matcher"] == claude_install.CLAUDE_MATCHERS["PreToolUse"]


def plugin_hook_command(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    hooks = json.loads((CLAUDE_PLUGIN / "hooks" / "hooks.json").read_text())
    command = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    command = command.replace("${CLAUDE_PLUGIN_ROOT}", str(CLAUDE_PLUGIN))
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "x", "cwd": env["HOME"], "prompt": "hi"}
    return subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_claude_code_plugin_hook_finds_sidelight(home: Path) -> None:
    env = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    done = plugin_hook_command(env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # It ran sidelight: the hook's log or state directory now exists.
    assert (home / ".local" / "state" / "sidelight").is_dir()


def test_claude_code_plugin_hook_uses_sidelight_bin(home: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    fake = tmp_path / "fake-sidelight"
    fake.write_text(f'#!/bin/sh\necho "$@" > {shlex.quote(str(marker))}\ncat >/dev/null\n')
    fake.chmod(0o755)
    done = plugin_hook_command({"HOME": str(home), "PATH": "/usr/bin:/bin", "SIDELIGHT_BIN": str(fake)})
    assert done.returncode == 0 and marker.read_text().strip() == "hook claude-code"


def test_claude_code_plugin_hook_is_silent_without_sidelight(home: Path) -> None:
    done = plugin_hook_command({"HOME": str(home), "PATH": "/usr/bin:/bin"})  # no sidelight there
    assert (done.returncode, done.stdout) == (0, "")


def test_claude_code_plugin_hook_finds_the_venv_it_was_installed_into(home: Path, tmp_path: Path) -> None:
    """Installed from a wheel, the plugin sits in `<venv>/lib/pythonX.Y/site-packages/sidelight/...`:
    its script runs `<venv>/bin/sidelight` even when that venv is not on PATH."""
    import shutil

    venv = tmp_path / "venv"
    plugin = venv / "lib" / "python3.11" / "site-packages" / "sidelight" / "agents" / "claude_code" / "plugin"
    shutil.copytree(CLAUDE_PLUGIN, plugin)
    marker = tmp_path / "ran"
    (venv / "bin").mkdir()
    fake = venv / "bin" / "sidelight"
    fake.write_text(f'#!/bin/sh\necho "$@" > {shlex.quote(str(marker))}\ncat >/dev/null\n')
    fake.chmod(0o755)
    done = subprocess.run(
        ["sh", str(plugin / "bin" / "sidelight-hook"), "claude-code"],
        input="{}",
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and marker.read_text().strip() == "hook claude-code", done.stderr


# ---------------------------------------------------------------------------------------------------
# Qwen Code and GitHub Copilot CLI


def test_qwen_install_adds_three_hooks_keeps_other_settings_and_is_idempotent(home: Path) -> None:
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}}, **EXISTING}))
    first = qwen_install.install_qwen()
    assert first.changed and first.backup is not None
    settings = json.loads(path.read_text())
    assert settings["security"] == {"auth": {"selectedType": "openai"}} and settings["model"] == "opus"
    for event in qwen_install.QWEN_EVENTS:
        (hook,) = ours(settings, event, "qwen")
        assert Path(shlex.split(hook["command"])[0]).is_absolute()
        assert hook["timeout"] == HOOK_TIMEOUT * 1000  # Qwen counts milliseconds
    assert OTHER_HOOK in settings["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert not qwen_install.install_qwen().changed
    assert json.loads(path.read_text()) == settings
    removed = qwen_install.uninstall_qwen()
    assert removed.changed
    left = json.loads(path.read_text())
    assert all(not ours(left, event, "qwen") for event in qwen_install.QWEN_EVENTS)
    assert left["hooks"]["UserPromptSubmit"] == [{"hooks": [OTHER_HOOK]}]
    assert not qwen_install.uninstall_qwen().changed


def test_copilot_install_writes_its_own_hooks_file_idempotently(home: Path) -> None:
    path = home / ".copilot" / "hooks" / "sidelight.json"
    done = cli(home, "install", "copilot")
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    assert data["version"] == 1 and set(data["hooks"]) == set(copilot_install.COPILOT_EVENTS)
    for (hook,) in data["hooks"].values():
        assert hook["type"] == "command" and hook["timeoutSec"] == HOOK_TIMEOUT
        assert hook["bash"].endswith(" hook copilot") and Path(shlex.split(hook["bash"])[0]).is_absolute()
    again = cli(home, "install", "copilot")
    assert again.returncode == 0 and "already installed" in again.stdout + again.stderr
    assert cli(home, "uninstall", "copilot").returncode == 0
    assert not path.exists()
    assert not copilot_install.uninstall_copilot().changed


def test_copilot_install_never_replaces_a_hooks_file_of_someone_else(home: Path) -> None:
    path = home / ".copilot" / "hooks" / "sidelight.json"
    path.parent.mkdir(parents=True)
    theirs = {"version": 1, "hooks": {"userPromptSubmitted": [{"type": "command", "bash": "echo x"}]}}
    path.write_text(json.dumps(theirs))
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        copilot_install.install_copilot()
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        copilot_install.uninstall_copilot()
    assert json.loads(path.read_text()) == theirs


def test_qwen_home_and_copilot_home_move_the_settings_and_the_sessions(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.agents import copilot, qwen
    from sidelight.config import Settings

    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "q"))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "c"))
    # Each is the agent's folder itself (not a parent of it, as GEMINI_CLI_HOME is).
    assert qwen_install.install_qwen().path == tmp_path / "q" / "settings.json"
    assert copilot_install.install_copilot().path == tmp_path / "c" / "hooks" / "sidelight.json"
    assert (tmp_path / "q" / "settings.json").is_file() and not (home / ".qwen").exists()
    settings = Settings.load()
    assert qwen.projects_dir(settings) == tmp_path / "q" / "projects"
    assert copilot.sessions_dir(settings) == tmp_path / "c" / "session-state"
    # As the agents read them: a leading ~ is the home, a relative path is from the current directory,
    # an empty value is unset.
    monkeypatch.chdir(tmp_path)
    env = {"HOME": str(home), "QWEN_HOME": "~/qq", "COPILOT_HOME": "rel"}
    moved = Settings.load(env=env, home=home)
    assert (moved.qwen_dir, moved.copilot_dir) == (home / "qq", tmp_path / "rel")
    plain = Settings.load(env={"HOME": str(home), "QWEN_HOME": "", "COPILOT_HOME": ""}, home=home)
    assert (plain.qwen_dir, plain.copilot_dir) == (home / ".qwen", home / ".copilot")
    assert qwen_install.uninstall_qwen().changed and copilot_install.uninstall_copilot().changed


def test_the_agents_folder_variables_reach_the_service_and_the_warm_path() -> None:
    from sidelight import agents, warm

    for name in ("QWEN_HOME", "COPILOT_HOME"):
        assert name in SERVICE_ENVIRONMENT and name in agents.HOST_VARIABLES and warm.told_to_watcher(name)


# ---------------------------------------------------------------------------------------------------
# Uninstall takes away exactly what install added (every target, both scopes); backups in the state
# directory. Run through the command line, as a user does, with no service manager on PATH.

#: Each target's files where install writes, relative to HOME (user scope) or the project (project
#: scope), with a user's file beside them that was there before install.
TARGETS: dict[str, dict[str, str]] = {
    "claude-code": {".claude/settings.json": '{\n    "model": "opus",\n    "env": {"A": "1"}\n}\n'},
    "codex": {
        ".codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}',
        ".codex/config.toml": '# mine\nmodel = "o3"  # kept as is\n',
    },
    "gemini": {".gemini/settings.json": '{"theme": "Dracula"}'},
    "qwen": {".qwen/settings.json": '{"security": {"auth": {"selectedType": "openai"}}}\n'},
    "copilot": {".copilot/hooks/other.json": '{"version": 1, "hooks": {}}\n'},
    "pi": {".pi/agent/extensions/other.ts": "export default function () {}\n"},
    "opencode": {".config/opencode/plugin/other.ts": "export const Other = async () => ({})\n"},
    "skill": {".claude/skills/mine/SKILL.md": "---\nname: mine\n---\n"},
    "service": {".config/systemd/user/other.service": "[Service]\nExecStart=/bin/true\n"},
}
#: The folders install makes for each target in an empty HOME (or project), outermost first.
MADE = {
    "claude-code": [".claude"],
    "codex": [".codex"],
    "gemini": [".gemini"],
    "qwen": [".qwen"],
    "copilot": [".copilot", ".copilot/hooks"],
    "pi": [".pi", ".pi/agent", ".pi/agent/extensions"],
    "opencode": [".config", ".config/opencode", ".config/opencode/plugin"],
    "skill": [".claude", ".claude/skills", ".claude/skills/sessions"],
    "service": [".config", ".config/systemd", ".config/systemd/user"],
}
SCOPES = [(target, "user") for target in TARGETS] + [
    (target, "project") for target in ("claude-code", "opencode", "skill")
]
PROJECT_PATHS = {"opencode": {".opencode/plugin/other.ts": "export const Other = async () => ({})\n"}}


def place(home: Path, tmp_path: Path, scope: str) -> tuple[Path, list[str]]:
    """Where install writes for ``scope`` (HOME or a project folder), and the options that say so."""
    if scope == "user":
        return home, []
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project, ["--scope", "project"]


def run(home: Path, where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = cli(home, *args, cwd=where, env={"PATH": str(home.parent / "no-managers")})
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize(("target", "scope"), SCOPES)
def test_uninstall_after_install_leaves_what_was_there_before(
    home: Path, tmp_path: Path, target: str, scope: str
) -> None:
    where, options = place(home, tmp_path, scope)
    before = tree(where)
    assert str(where) in run(home, where, "install", target, *options).stdout
    made = [p for p in MADE[target] if (where / p).is_dir()]
    if scope == "user":
        assert made == MADE[target]
    run(home, where, "install", target, *options)  # twice, then once
    done = run(home, where, "uninstall", target, *options)
    assert tree(where) == before == {}, done.stdout  # no `{}` file, no empty folder left
    assert "that install had made" in done.stdout
    assert list(state_dir().glob("backups/**/*.*")) == []  # nothing backed up: all was sidelight's


@pytest.mark.parametrize(("target", "scope"), SCOPES)
def test_uninstall_keeps_the_users_files_and_folders_byte_for_byte(
    home: Path, tmp_path: Path, target: str, scope: str
) -> None:
    where, options = place(home, tmp_path, scope)
    files = PROJECT_PATHS.get(target, TARGETS[target]) if scope == "project" else TARGETS[target]
    for name, text in files.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    empty = where / next(iter(files)).split("/")[0] / "empty-folder-of-mine"
    empty.mkdir()
    before = tree(where)
    installed = run(home, where, "install", target, *options)
    changed = [where / name for name in files if (where / name).read_text() != files[name]]
    for path in changed:  # a changed file of the user's is backed up first, in the state directory
        (backup,) = backups(path)
        assert backup.read_text() == files[str(path.relative_to(where))]
        assert backup.parent == state_dir() / "backups" / target
        assert f"(backup: {backup})" in installed.stdout
    run(home, where, "install", target, *options)
    run(home, where, "uninstall", target, *options)
    assert tree(where) == before


@pytest.mark.parametrize("target", ["claude-code", "codex", "gemini", "qwen"])
def test_uninstall_of_a_settings_file_install_created_and_the_user_edited_since(
    home: Path, target: str
) -> None:
    name = next(iter(TARGETS[target]))
    path = home / name
    run(home, home, "install", target)
    edited = json.loads(path.read_text())
    edited["mine"] = True
    path.write_text(json.dumps(edited))
    done = run(home, home, "uninstall", target)
    assert json.loads(path.read_text()) == {"mine": True}  # kept, with only sidelight's hooks gone
    (backup,) = backups(path)
    assert json.loads(backup.read_text()) == edited and f"(backup: {backup})" in done.stdout


def test_uninstall_removes_a_settings_file_install_created_once_only_its_hooks_are_left(home: Path) -> None:
    """Reformatted by the host (or a person) since install, it holds nothing else: removed, not `{}`."""
    path = home / ".gemini" / "settings.json"
    run(home, home, "install", "gemini")
    path.write_text(json.dumps(json.loads(path.read_text()), indent=8))
    run(home, home, "uninstall", "gemini")
    assert tree(home) == {}


@pytest.mark.parametrize(("target", "scope"), SCOPES)
def test_uninstall_without_install_says_so_and_changes_nothing(
    home: Path, tmp_path: Path, target: str, scope: str
) -> None:
    where, options = place(home, tmp_path, scope)
    before = tree(tmp_path)
    done = run(home, where, "uninstall", target, *options)
    assert "not installed" in done.stdout
    assert tree(tmp_path) == before and not state_dir().exists()


def test_codex_uninstall_turns_off_the_flag_install_turned_on(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    codex_install.install_codex()
    results = codex_install.uninstall_codex()
    assert config.read_text() == CODEX_CONFIG and not (home / ".codex" / "hooks.json").exists()
    assert [r.notes for r in results] == [(), ()]
    assert "restored as it was before install" in results[1].message
    # The flag was on before install: it is no one's to take away.
    config.write_text("[features]\nhooks = true\n")
    codex_install.install_codex()
    (result,) = codex_install.uninstall_codex()
    assert config.read_text() == "[features]\nhooks = true\n" and result.notes == ()


def test_installs_of_one_target_in_two_projects_are_undone_separately(home: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    for project in (one, two):
        run(home, project, "install", "claude-code", "--scope", "project")
    run(home, one, "uninstall", "claude-code", "--scope", "project")
    assert tree(one) == {} and (two / ".claude" / "settings.json").is_file()
    run(home, two, "uninstall", "claude-code", "--scope", "project")
    assert tree(two) == {} and not (state_dir() / "installs").exists()


#: Two installs whose files share a folder install makes when it is missing (`.claude`, `.config`,
#: `.pi/agent`), each as its arguments.
SHARING = {
    "claude-code+skill": (["claude-code"], ["skill"]),
    "claude-code+skill, project": (["claude-code", "--scope", "project"], ["skill", "--scope", "project"]),
    "opencode+service": (["opencode"], ["service"]),
    "pi+skill for pi": (["pi"], ["skill", "--dir", "~/.pi/agent/skills/sessions"]),
}


@pytest.mark.parametrize("pair", SHARING)
@pytest.mark.parametrize("installed_first", [True, False])
@pytest.mark.parametrize("uninstalled_first", [True, False])
def test_a_folder_two_installs_share_goes_with_the_last_of_them_in_any_order(
    home: Path, tmp_path: Path, pair: str, installed_first: bool, uninstalled_first: bool
) -> None:
    """Whichever install made the shared folder, it goes when the last thing install put in it goes,
    and so does the state directory's `installs/` once it holds no record."""
    where, _ = place(home, tmp_path, "project" if "project" in pair else "user")
    one, other = ([a.replace("~", str(home)) for a in args] for args in SHARING[pair])
    for args in (one, other) if installed_first else (other, one):
        run(home, where, "install", *args)
    assert tree(where) != {}
    for args in (one, other) if uninstalled_first else (other, one):
        run(home, where, "uninstall", *args)
    assert tree(home) == {} and tree(where) == {}
    assert not (state_dir() / "installs").exists()


def test_a_shared_folder_holding_the_users_file_stays(home: Path) -> None:
    run(home, home, "install", "claude-code")
    run(home, home, "install", "skill")
    (home / ".claude" / "mine.txt").write_text("mine")
    run(home, home, "uninstall", "claude-code")
    run(home, home, "uninstall", "skill")
    assert tree(home) == {".claude": None, ".claude/mine.txt": b"mine"}


def test_an_install_by_an_older_version_is_removed_without_guessing(home: Path) -> None:
    """No record of what install created: only sidelight's entries go, every file and folder stays."""
    claude_install.install_claude_code()
    (state_dir() / "installs" / "claude-code.json").unlink()
    assert claude_install.uninstall_claude_code().changed
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {}
