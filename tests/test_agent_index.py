"""The static index of the built-in agents (:mod:`sidelight.agents`): the plugin manager, the hook, the
warm client and the command line derive their tables from it and name no agent themselves.

``tests/test_plugins.py`` checks each record against what its agent's module provides and answers.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from sidelight import agents as index
from sidelight import warm
from sidelight.config import Settings
from sidelight.hookspecs import hookimpl
from sidelight.plugins import BUILTINS, Plugins
from sidelight.records import HostEvent, InstallerSpec

PACKAGE = Path(index.__file__).resolve().parents[1]

#: Modules that must name no agent: their tables come from the index.
NAMING_NONE = ("plugins.py", "warm.py", "features/hook.py", "cli/hooks.py", "cli/install.py", "hostio.py")


def _names() -> set[str]:
    """Every name the index gives an agent or a host, and each agent module's own name."""
    names: set[str] = set(index.HOOK_HOSTS)
    for agent in index.BUILTIN_AGENTS:
        names.update(agent.provides["agents"])
        names.update(agent.hosts)
        names.add(agent.module.rpartition(".")[2])
    return names


def _named_in_code(path: Path, names: set[str]) -> list[str]:
    """The string literals (not docstrings) and identifiers of ``path`` that are, or hold as a word, one
    of ``names``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = set(node.value.replace(",", " ").replace(":", " ").split())
        elif isinstance(node, ast.Name):
            words = {node.id}
        elif isinstance(node, ast.Attribute):
            words = {node.attr}
        else:
            continue
        found.extend(sorted(words & names))
    return found


@pytest.mark.parametrize("module", NAMING_NONE)
def test_the_manager_the_hook_the_warm_client_and_the_cli_name_no_agent(module: str) -> None:
    assert _named_in_code(PACKAGE / module, _names()) == []


def test_there_is_no_table_of_hosts_outside_the_agents() -> None:
    assert not (PACKAGE / "templates" / "hosts.py").exists()
    assert "sidelight.templates.hosts" not in BUILTINS


def test_each_agent_is_one_record_registered_first() -> None:
    modules = [agent.module for agent in index.BUILTIN_AGENTS]
    assert BUILTINS[: len(modules)] == tuple(modules)
    assert all(m.startswith("sidelight.agents.") for m in modules)
    assert len(set(modules)) == len(modules)
    # each record names its agent once, and each host is one agent's
    hosts = [host for agent in index.BUILTIN_AGENTS for host in agent.hosts]
    assert len(hosts) == len(set(hosts))
    assert [a for a in index.BUILTIN_AGENTS if a.fallback] == [index.agent_of(modules[0])]
    assert index.FALLBACK_HOST in index.HOOK_HOSTS


def test_the_index_names_what_each_agents_module_registers_as_its_agent() -> None:
    for agent in index.BUILTIN_AGENTS:
        module = importlib.import_module(agent.module)
        specs = list(module.sidelight_agents())
        assert [s.name for s in specs] == list(agent.provides["agents"]), agent.module
        injectors = {i.name for i in module.sidelight_injectors()} if "injectors" in agent.provides else set()
        for spec in specs:
            assert set(spec.hosts) <= injectors, agent.module  # a host it names, it speaks


def test_the_hosts_the_hook_takes_are_the_agents_injectors() -> None:
    plugins = Plugins(entry_points=False)
    assert set(index.HOOK_HOSTS) == set(plugins.injectors())
    for host in index.HOOK_HOSTS:
        assert Plugins(entry_points=False).injector(host) is not None, host


def test_the_warm_client_tells_the_watcher_every_agents_variables() -> None:
    folders = {v for agent in index.BUILTIN_AGENTS for v in agent.variables}
    assert folders and set(index.AGENT_FOLDER_VARIABLES) == {"XDG_STATE_HOME", *folders}
    hook_variables = {v for agent in index.BUILTIN_AGENTS for v in agent.hook_variables}
    assert hook_variables
    assert {"HOME", *index.AGENT_FOLDER_VARIABLES, *hook_variables} == index.HOST_VARIABLES
    # the warm client does not read the index: it tells every variable named like an agent's
    assert all(warm.told_to_watcher(name) for name in index.HOST_VARIABLES)
    env = {name: "x" for name in index.HOST_VARIABLES} | {"PATH": "/bin", "SIDELIGHT_WARM": "1"}
    told = dict(warm.environment(env))
    assert set(told) == index.HOST_VARIABLES
    assert warm.environment(told, index.HOST_VARIABLES) == warm.environment(env)
    from sidelight.install.service import SERVICE_ENVIRONMENT

    assert folders <= set(SERVICE_ENVIRONMENT)


def test_the_warm_client_does_not_import_the_agents_index() -> None:
    code = "import sys, sidelight.warm; print('sidelight.agents' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_build_is_told_by_its_hook_composer() -> None:
    # a watcher of another build (an upgrade installed while it runs) declines: the id must move with
    # the composer's file, so it must name one that exists
    assert int(warm.build_id().rpartition(":")[2]) != 0


def test_the_index_imports_nothing_but_os() -> None:
    code = (
        "import __future__, sys, sidelight\n"  # (every module of sidelight's imports __future__)
        "before = set(sys.modules)\n"
        "import sidelight.agents\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['sidelight.agents']"


def test_a_host_another_agent_claims_is_never_the_fallback_agents(tmp_path: Path) -> None:
    # The fallback agent names a session for any host no other agent has (a plugin's), not for another
    # built-in agent's: an event whose own resolver found nothing is no session of the fallback agent.
    home = tmp_path / "home"
    home.mkdir()
    settings = Settings.load(env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(tmp_path / "s")}, home=home)
    fallback = next(a for a in index.BUILTIN_AGENTS if a.fallback)
    module = importlib.import_module(fallback.module)
    others = {h for a in index.BUILTIN_AGENTS if a is not fallback for h in a.hosts}
    assert others
    for host in sorted(others | {"a-plugins-host"}):
        event = HostEvent(
            host=host,
            event="UserPromptSubmit",
            session_id=str(uuid.uuid4()),
            cwd=tmp_path / "work",
            transcript_path=None,
        )
        named = module.current(event, settings)
        assert (named is not None) is (host not in others), host
        assert index.may_name_current(fallback, host) is (host not in others), host


def test_a_start_that_may_be_a_return_is_the_agents_to_say() -> None:
    resuming = {h for a in index.BUILTIN_AGENTS if a.start_may_resume for h in a.hosts}
    assert resuming
    for host in index.HOOK_HOSTS:
        assert index.start_may_resume(host) is (host in resuming)
    assert not index.start_may_resume("a-plugins-host")


class _Installer:
    @hookimpl
    def sidelight_installers(self) -> Any:
        yield InstallerSpec(
            name="my-agent",
            install=lambda scope: [],
            uninstall=lambda scope: [],
            description="the hooks in ~/.my-agent/hooks.json",
            scopes=("user", "project"),
        )


def _help(command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    from sidelight import plugins as plugins_module
    from sidelight.cli.parser import build_parser

    plugins = Plugins(entry_points=False)
    plugins.register(_Installer(), name="my-agent-plugin")
    monkeypatch.setattr(plugins_module, "_plugins", plugins)
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_install_help_says_what_every_registered_installer_sets_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = _help("install", monkeypatch, capsys)
    assert "my-agent: the hooks in ~/.my-agent/hooks.json;" in shown
    for name, spec in Plugins(entry_points=False).installers().items():
        assert f"{name}: {spec.description}" in shown
    # and which targets --scope project applies to, a plugin's among them
    scope = next(line for line in shown.splitlines() if "the user's settings or this project's" in line)
    assert "my-agent" in scope and "skill" in scope


def test_uninstall_help_says_which_targets_have_a_project_scope(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = _help("uninstall", monkeypatch, capsys)
    scope = next(line for line in shown.splitlines() if "the user's settings or this project's" in line)
    assert "my-agent" in scope


def test_hook_help_lists_the_agents_hosts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = _help("hook", monkeypatch, capsys)
    assert ", ".join(index.HOOK_HOSTS) in shown
