"""Where installing lives (issue 30, items 1 and 5): ``sidelight.install`` is a package by job that names
no agent; each built-in agent's installer, and what it ships for its host, is in the agent's folder and
registered from there, through ``sidelight_installers`` as a plugin's installer is; a prompt never
imports any of it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sidelight.agents
import sidelight.install
from sidelight.cli.install import install_targets
from sidelight.plugins import BUILTINS, Plugins
from sidelight.records import InstallerSpec, InstallResult
from tests.test_plugins import plugin

AGENTS = Path(sidelight.agents.__file__).parent
#: The built-in agents with a host sidelight installs into: their folders.
INSTALLED_AGENTS = (
    "claude_code",
    "cline",
    "codex",
    "copilot",
    "droid",
    "gemini",
    "kimi",
    "opencode",
    "pi",
    "qwen",
)


def agent_words() -> set[str]:
    """The words that name a built-in agent: each agent folder's name and its parts (``claude_code``:
    ``claude``, ``code`` is too common a word to count)."""
    words = set()
    for folder in AGENTS.iterdir():
        if (folder / "__init__.py").is_file():
            words.add(folder.name.replace("_", "-"))
            words.add(folder.name.split("_")[0])
    return words


def names_in_code(path: Path) -> set[str]:
    """The words of a module's code: its identifiers and string literals (docstrings too), split at
    anything but a letter or a digit, lowercased."""
    words: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            text = node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        words.update(w for w in re.split(r"[^a-z0-9]+", text.lower()) if w)
    return words


def test_install_is_a_package_by_job_that_names_no_agent() -> None:
    package = Path(sidelight.install.__file__).parent
    assert hasattr(sidelight.install, "__path__"), "sidelight.install is one module, not a package"
    modules = sorted(package.glob("*.py"))
    assert {m.stem for m in modules} >= {"__init__", "ledger", "settings", "jsonc", "service"}
    words = agent_words()
    assert {"claude", "codex", "pi", "gemini", "qwen", "copilot", "opencode"} <= words
    named = {m.name: sorted(names_in_code(m) & words) for m in modules}
    assert {name: found for name, found in named.items() if found} == {}


def test_the_plugin_api_is_importable_as_before() -> None:
    """What examples/sidelight-kiro and docs/plugins.md use, from ``sidelight.install`` itself."""
    from sidelight.install import (
        InstallError,
        hook_command,
        install_file,
        sidelight_command,
        uninstall_file,
    )

    assert issubclass(InstallError, ValueError)
    assert sidelight.install.InstallResult is InstallResult
    assert hook_command("x").endswith(" hook x") and sidelight_command()
    assert callable(install_file) and callable(uninstall_file)


def test_every_built_in_agent_s_installer_comes_from_its_folder() -> None:
    """Each built-in agent registers its own installer (``sidelight_installers`` in its module, the
    record and the work in its folder's ``install.py``); the templates keep only the watcher's service."""
    installers = Plugins(entry_points=False).installers()
    owners = {name: spec.install.__module__ for name, spec in installers.items()}
    assert owners.pop("service") == "sidelight.install.service"
    expected = sorted(f"sidelight.agents.{folder}.install" for folder in INSTALLED_AGENTS)
    assert sorted(owners.values()) == expected
    for name, module in owners.items():
        folder = module.split(".")[2]
        assert folder.replace("_", "-") == name, (name, module)
        assert f"sidelight.agents.{folder}" in BUILTINS
        spec = installers[name]
        assert isinstance(spec, InstallerSpec) and spec.uninstall.__module__ == module and spec.description


def test_a_prompt_imports_no_installer() -> None:
    """A prompt hook imports the agents' modules (their formats, resolvers and injectors), never their
    installers: each agent's ``sidelight_installers`` imports its ``install.py`` when asked."""
    code = (
        "import json, sys\n"
        "from sidelight.plugins import Plugins\n"
        "plugins = Plugins(entry_points=False)\n"
        "plugins.formats(); plugins.resolvers(); plugins.injectors()\n"
        "before = sorted(sys.modules)\n"
        "names = plugins.installers()\n"
        "print(json.dumps([sorted(names), before, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    names, before, after = json.loads(done.stdout)
    assert "claude-code" in names and "service" in names

    def installers(modules: list[str]) -> list[str]:
        return [
            m
            for m in modules
            if m == "sidelight.install"
            or m.startswith("sidelight.install.")
            or (m.startswith("sidelight.agents.") and m.endswith(".install"))
        ]

    assert "sidelight.agents.claude_code" in before
    assert installers(before) == []
    assert "sidelight.agents.claude_code.install" in installers(after)


def test_the_files_shipped_for_a_host_are_in_its_agent_s_folder() -> None:
    from sidelight.agents.claude_code.install import claude_plugin_dir
    from sidelight.agents.opencode.install import PLUGIN
    from sidelight.agents.pi.install import EXTENSION

    assert claude_plugin_dir() == AGENTS / "claude_code" / "plugin"
    assert (claude_plugin_dir() / ".claude-plugin" / "plugin.json").is_file()
    assert EXTENSION == AGENTS / "pi" / "extension.ts" and EXTENSION.is_file()
    assert PLUGIN == AGENTS / "opencode" / "plugin.ts" and PLUGIN.is_file()
    shipped = Path(sidelight.__file__).parent / "integrations"
    assert not any((shipped / name).exists() for name in ("claude-code", "pi", "opencode"))


def test_install_targets_are_the_registered_installers_by_name_and_the_skill() -> None:
    """``sidelight install`` lists every registered installer by name, whoever registered it (a
    built-in agent, the service, a plugin), then ``skill``."""
    registered = Plugins(entry_points=False).installers()
    targets = install_targets()
    assert targets[-1] == "skill" and set(targets[:-1]) >= set(registered)
    assert targets[:-1] == sorted(targets[:-1])


def test_a_plugin_s_installer_is_run_by_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sidelight install NAME`` runs whatever installer is registered as NAME: no list of agents."""
    from sidelight.cli import install as install_command

    ran: list[str] = []

    def run(scope: str) -> list[InstallResult]:
        ran.append(scope)
        return [InstallResult("zz-agent", tmp_path / "f", True, "installed zz")]

    plugins = Plugins(entry_points=False)
    plugins.register(
        plugin(sidelight_installers=[InstallerSpec("zz-agent", run, run, "zz", ("user", "project"))])
    )
    monkeypatch.setattr("sidelight.plugins._plugins", plugins)
    assert "zz-agent" in install_command.install_targets()
    assert install_command._install_or_uninstall("zz-agent", "project", None, install=True) == 0
    assert install_command._install_or_uninstall("zz-agent", "user", None, install=False) == 0
    assert ran == ["project", "user"]
