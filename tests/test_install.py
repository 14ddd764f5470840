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

from sidelight import install
from tests.conftest import cli_command

INTEGRATIONS = Path(install.__file__).parent / "integrations"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME, with the agents' own location variables cleared."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "SIDELIGHT_BIN",
        "SIDELIGHT_STATE_DIR",
    ):
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
    return sorted(path.parent.glob(f"{path.name}.sidelight-backup-*"))


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
    result = install.install_claude_code()
    path = home / ".claude" / "settings.json"
    assert result.changed and result.path == path and result.backup is None
    settings = json.loads(path.read_text())
    for event in install.CLAUDE_EVENTS:
        (hook,) = ours(settings, event)
        assert hook["type"] == "command" and hook["timeout"] == install.HOOK_TIMEOUT
        argv = shlex.split(hook["command"])
        assert argv[-2:] == ["hook", "claude-code"] and Path(argv[0]).is_absolute()


def test_claude_code_install_is_idempotent(home: Path) -> None:
    install.install_claude_code()
    path = home / ".claude" / "settings.json"
    before = path.read_text()
    again = install.install_claude_code()
    assert not again.changed and "already installed" in again.message
    assert path.read_text() == before
    assert backups(path) == []


def test_claude_code_install_keeps_other_hooks_and_settings_and_backs_up(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=4)
    path.write_text(original)
    path.chmod(0o600)
    result = install.install_claude_code()
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == EXISTING["permissions"]
    assert settings["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert OTHER_HOOK in [h for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert len(ours(settings, "UserPromptSubmit")) == 1
    (backup,) = backups(path)
    assert result.backup == backup and backup.read_text() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the mode survives the atomic write
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_claude_code_install_updates_a_moved_command(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_BIN", "/old/venv/bin/sidelight")
    install.install_claude_code()
    monkeypatch.setenv("SIDELIGHT_BIN", "/new/venv/bin/sidelight")
    assert install.install_claude_code().changed
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    for event in install.CLAUDE_EVENTS:
        assert [h["command"] for h in ours(settings, event)] == ["/new/venv/bin/sidelight hook claude-code"]


def test_claude_code_install_quotes_paths_with_spaces(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_BIN", shlex.quote("/opt/my tools/sidelight"))
    install.install_claude_code()
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
        install.install_claude_code()
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
    install.install_claude_code()
    result = install.uninstall_claude_code()
    assert result.changed and result.backup is not None
    assert json.loads(path.read_text()) == EXISTING
    again = install.uninstall_claude_code()
    assert not again.changed and "not installed" in again.message


def test_claude_code_uninstall_leaves_an_empty_object(home: Path) -> None:
    install.install_claude_code()
    install.uninstall_claude_code()
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {}


def test_claude_code_uninstall_keeps_look_alike_commands(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    keep = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-hook claude-code"}]}]}
    }
    path.write_text(json.dumps(keep))
    assert not install.uninstall_claude_code().changed
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
    assert done.returncode == 0 and json.loads((project / ".claude" / "settings.json").read_text()) == {}


def test_claude_code_honours_claude_config_dir(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert install.install_claude_code().path == config / "settings.json"


def test_claude_code_cli_install_twice(home: Path) -> None:
    first = cli(home, "install", "claude-code")
    second = cli(home, "install", "claude-code")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "installed" in first.stdout and "already installed" in second.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert all(len(ours(settings, event)) == 1 for event in install.CLAUDE_EVENTS)


def test_installed_hook_command_runs(home: Path) -> None:
    """The installed command runs as is, from an empty PATH, and stays silent on a prompt with no news."""
    install.install_claude_code()
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
    results = install.install_codex()
    assert all(r.changed for r in results) and len(results) == 2
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())
    assert set(hooks["hooks"]) == set(install.CODEX_EVENTS)
    for event in install.CODEX_EVENTS:
        (hook,) = ours(hooks, event, "codex")
        assert shlex.split(hook["command"])[-2:] == ["hook", "codex"]
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)  # the rest is untouched, comments included
    assert tomllib.loads(text)["features"] == {"hooks": True}
    assert backups(config)[0].read_text() == CODEX_CONFIG
    assert any("trust" in note for r in results for note in r.notes)


def test_codex_install_is_idempotent(home: Path) -> None:
    install.install_codex()
    hooks, config = home / ".codex" / "hooks.json", home / ".codex" / "config.toml"
    before = (hooks.read_text(), config.read_text())
    results = install.install_codex()
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
    install.install_codex()
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
    install.install_codex()
    assert path.read_text() == "features.hooks = true\n" and backups(path) == []


def test_codex_refuses_broken_toml_and_changes_nothing(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("model = \n")
    with pytest.raises(install.InstallError, match="not valid TOML"):
        install.install_codex()
    assert not (home / ".codex" / "hooks.json").exists()


def test_codex_keeps_other_hooks_and_uninstall_leaves_the_flag(home: Path) -> None:
    hooks = home / ".codex" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    other = {"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}], "UserPromptSubmit": [{"hooks": [OTHER_HOOK]}]}}
    hooks.write_text(json.dumps(other))
    install.install_codex()
    assert OTHER_HOOK in json.loads(hooks.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"]
    (result,) = install.uninstall_codex()
    assert result.changed and any("stays" in note for note in result.notes)
    assert json.loads(hooks.read_text()) == other
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["features"]["hooks"] is True


def test_codex_honours_codex_home(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    results = install.install_codex()
    assert results[0].path == tmp_path / "codex-home" / "hooks.json"


def test_codex_cli(home: Path) -> None:
    done = cli(home, "install", "codex")
    assert done.returncode == 0 and "hooks.json" in done.stdout and "trust" in done.stderr
    done = cli(home, "uninstall", "codex")
    assert done.returncode == 0 and "removed" in done.stdout


# ---------------------------------------------------------------------------------------------------
# Pi


def test_pi_install_copies_the_extension_with_the_command_baked_in(home: Path) -> None:
    result = install.install_pi()
    path = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    assert result.changed and result.path == path
    text = path.read_text()
    assert install.PI_MARKER in text
    line = next(line for line in text.splitlines() if line.startswith("const INSTALLED_COMMAND"))
    baked = json.loads(line.split("=", 1)[1].strip().rstrip(";"))
    assert baked == install.sidelight_command()
    assert 'pi.on("before_agent_start"' in text and '"session-update"' in text


def test_pi_install_is_idempotent_and_backs_up_a_changed_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install.install_pi()
    assert not install.install_pi().changed
    path = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    monkeypatch.setenv("SIDELIGHT_BIN", "/elsewhere/sidelight")
    result = install.install_pi()
    assert result.changed and result.backup is not None and '["/elsewhere/sidelight"]' in path.read_text()


def test_pi_uninstall_removes_only_its_own_file(home: Path) -> None:
    install.install_pi()
    assert install.uninstall_pi().changed
    assert not (home / ".pi" / "agent" / "extensions" / "sidelight.ts").exists()
    assert not install.uninstall_pi().changed
    foreign = home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    foreign.write_text("export default function (pi) {}\n")
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        install.uninstall_pi()
    assert foreign.exists()


def test_pi_honours_pi_coding_agent_dir(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    assert install.install_pi().path == tmp_path / "pi-agent" / "extensions" / "sidelight.ts"


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
    assert (INTEGRATIONS / "pi" / "sidelight.ts").is_file()
    assert (INTEGRATIONS / "claude-code" / ".claude-plugin" / "plugin.json").is_file()
    assert (INTEGRATIONS / "claude-code" / "hooks" / "hooks.json").is_file()
    assert (INTEGRATIONS / "claude-code" / "bin" / "sidelight-hook").is_file()
    assert install.claude_plugin_dir() == INTEGRATIONS / "claude-code"


def test_claude_code_plugin_manifest_and_hooks_are_valid() -> None:
    manifest = json.loads((INTEGRATIONS / "claude-code" / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "sidelight" and manifest["description"]
    hooks = json.loads((INTEGRATIONS / "claude-code" / "hooks" / "hooks.json").read_text())
    assert set(hooks["hooks"]) == set(install.CLAUDE_EVENTS)
    for groups in hooks["hooks"].values():
        (group,) = groups
        (hook,) = group["hooks"]
        assert hook["type"] == "command" and isinstance(hook["timeout"], int)
        assert "${CLAUDE_PLUGIN_ROOT}/bin/sidelight-hook" in hook["command"]
        assert hook["command"].endswith("claude-code")


def plugin_hook_command(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    hooks = json.loads((INTEGRATIONS / "claude-code" / "hooks" / "hooks.json").read_text())
    command = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    command = command.replace("${CLAUDE_PLUGIN_ROOT}", str(INTEGRATIONS / "claude-code"))
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
    plugin = venv / "lib" / "python3.11" / "site-packages" / "sidelight" / "integrations" / "claude-code"
    shutil.copytree(INTEGRATIONS / "claude-code", plugin)
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
    first = install.install_qwen()
    assert first.changed and first.backup is not None
    settings = json.loads(path.read_text())
    assert settings["security"] == {"auth": {"selectedType": "openai"}} and settings["model"] == "opus"
    for event in install.QWEN_EVENTS:
        (hook,) = ours(settings, event, "qwen")
        assert Path(shlex.split(hook["command"])[0]).is_absolute()
        assert hook["timeout"] == install.HOOK_TIMEOUT * 1000  # Qwen counts milliseconds
    assert OTHER_HOOK in settings["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert not install.install_qwen().changed
    assert json.loads(path.read_text()) == settings
    removed = install.uninstall_qwen()
    assert removed.changed
    left = json.loads(path.read_text())
    assert all(not ours(left, event, "qwen") for event in install.QWEN_EVENTS)
    assert left["hooks"]["UserPromptSubmit"] == [{"hooks": [OTHER_HOOK]}]
    assert not install.uninstall_qwen().changed


def test_copilot_install_writes_its_own_hooks_file_idempotently(home: Path) -> None:
    path = home / ".copilot" / "hooks" / "sidelight.json"
    done = cli(home, "install", "copilot")
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    assert data["version"] == 1 and set(data["hooks"]) == set(install.COPILOT_EVENTS)
    for (hook,) in data["hooks"].values():
        assert hook["type"] == "command" and hook["timeoutSec"] == install.HOOK_TIMEOUT
        assert hook["bash"].endswith(" hook copilot") and Path(shlex.split(hook["bash"])[0]).is_absolute()
    again = cli(home, "install", "copilot")
    assert again.returncode == 0 and "already installed" in again.stdout + again.stderr
    assert cli(home, "uninstall", "copilot").returncode == 0
    assert not path.exists()
    assert not install.uninstall_copilot().changed


def test_copilot_install_never_replaces_a_hooks_file_of_someone_else(home: Path) -> None:
    path = home / ".copilot" / "hooks" / "sidelight.json"
    path.parent.mkdir(parents=True)
    theirs = {"version": 1, "hooks": {"userPromptSubmitted": [{"type": "command", "bash": "echo x"}]}}
    path.write_text(json.dumps(theirs))
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        install.install_copilot()
    with pytest.raises(install.InstallError, match="not written by sidelight"):
        install.uninstall_copilot()
    assert json.loads(path.read_text()) == theirs


def test_qwen_home_and_copilot_home_move_the_settings_and_the_sessions(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.config import Settings
    from sidelight.templates import copilot, qwen

    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "q"))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "c"))
    # Each is the agent's folder itself (not a parent of it, as GEMINI_CLI_HOME is).
    assert install.install_qwen().path == tmp_path / "q" / "settings.json"
    assert install.install_copilot().path == tmp_path / "c" / "hooks" / "sidelight.json"
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
    assert install.uninstall_qwen().changed and install.uninstall_copilot().changed


def test_the_agents_folder_variables_reach_the_service_and_the_warm_path() -> None:
    from sidelight import warm

    for name in ("QWEN_HOME", "COPILOT_HOME"):
        assert name in install.SERVICE_ENVIRONMENT and name in warm.HOST_VARIABLES
